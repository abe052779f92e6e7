import { createHash } from 'node:crypto';
import request from 'supertest';
import type { TestCollectApp } from './test-app.js';

/**
 * A Briefcase-like client of the pull API (docs/encryption.md "Briefcase pull"), reading the
 * documents by their element names as ODK Briefcase does.
 */
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

function binary(res: request.Response, cb: (err: Error | null, body: Buffer) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

/** What a Briefcase-like client reads from the documents (by their element names). */
export const idsOf = (xml: string) => [...xml.matchAll(/<id>([^<]*)<\/id>/g)].map((m) => m[1]!);
export const cursorOf = (xml: string) => /<resumptionCursor>([^<]*)<\/resumptionCursor>/.exec(xml)?.[1] ?? '';
const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
function mediaOf(xml: string): Array<{ filename: string; hash: string; downloadUrl: string }> {
  return [...xml.matchAll(/<mediaFile><filename>([^<]*)<\/filename><hash>([^<]*)<\/hash><downloadUrl>([^<]*)<\/downloadUrl><\/mediaFile>/g)].map((m) => ({
    filename: unescape(m[1]!),
    hash: m[2]!,
    downloadUrl: unescape(m[3]!),
  }));
}

export interface Pulled {
  instanceId: string;
  data: string;
  files: Map<string, Buffer>;
}

/**
 * Pulls every submission of a form as ODK Briefcase does: submissionList page after page with
 * the cursor until an empty page, then downloadSubmission per id and every mediaFile's URL
 * (checked against its md5).
 */
export async function briefcasePull(sut: TestCollectApp, auth: string, prefix: string, formId: string, numEntries: number, rootName = 'data'): Promise<{ pulled: Pulled[]; pages: number }> {
  const ids: string[] = [];
  let cursor = '';
  let pages = 0;
  for (;;) {
    const res = await request(sut.url).get(`${prefix}/view/submissionList`).query({ formId, numEntries, cursor }).set('Authorization', auth).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/xml/);
    expect(res.text).toContain('<idChunk xmlns="http://opendatakit.org/submissions"><idList>');
    pages++;
    const page = idsOf(res.text);
    expect(page.length).toBeLessThanOrEqual(numEntries);
    cursor = cursorOf(res.text);
    expect(cursor).not.toBe('');
    if (!page.length) break;
    ids.push(...page);
  }
  const pulled: Pulled[] = [];
  for (const id of ids) {
    const path = `${formId}[@version=null and @uiVersion=null]/${rootName}[@key=${id}]`;
    const res = await request(sut.url).get(`${prefix}/view/downloadSubmission`).query({ formId: path }).set('Authorization', auth).expect(200);
    expect(res.text).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><submission xmlns="http:\/\/opendatakit.org\/submissions" xmlns:orx="http:\/\/openrosa.org\/xforms"><data>/);
    const data = /<data>([\s\S]*)<\/data>/.exec(res.text)![1]!;
    const files = new Map<string, Buffer>();
    for (const m of mediaOf(res.text)) {
      const url = new URL(m.downloadUrl);
      const file = await request(sut.url).get(`${url.pathname}${url.search}`).set('Authorization', auth).buffer(true).parse(binary).expect(200);
      expect(m.hash).toBe(`md5:${md5(file.body as Buffer)}`);
      files.set(m.filename, file.body as Buffer);
    }
    pulled.push({ instanceId: id, data, files });
  }
  return { pulled, pages };
}

