import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createBrotliCompress, createDeflate, createGzip, createZstdCompress } from 'node:zlib';
import { startTestCasApp, type TestCasApp } from '../../cas/test/test-app.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Decompression bombs for every compressed input outside the XLSForm reader (which has its own
 * capped unzip, docs/xlsform.md): the only other place either service inflates user bytes is the
 * JSON and form body parser, which decodes `Content-Encoding: gzip | deflate | br | zstd`
 * (docs/security.md, "Numbers, formulas and names"). Its limit (`HTTP_BODY_LIMIT_BYTES`)
 * counts the decoded bytes, whatever Content-Length or the encoding claim, and it stops
 * inflating there. Each row sends 256 MiB of zeros compressed to well under 1 MiB: the answer is
 * 413, and the process (the app runs in this one) grows by far less than what the bomb holds.
 */

const INFLATED = 256 * 1024 * 1024;

type Encoding = 'gzip' | 'deflate' | 'br' | 'zstd';
const compressors: Record<Encoding, () => NodeJS.ReadWriteStream> = {
  gzip: () => createGzip({ level: 9 }),
  deflate: () => createDeflate({ level: 9 }),
  br: () => createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }),
  zstd: () => createZstdCompress(),
};

/** `INFLATED` bytes of `fill` (`{` makes the start of a JSON value, `a` a form field), compressed without holding them. */
async function bomb(encoding: Encoding, fill: string): Promise<Buffer> {
  const chunk = Buffer.alloc(1024 * 1024, fill);
  const out: Buffer[] = [];
  const z = compressors[encoding]();
  z.on('data', (c: Buffer) => out.push(c));
  await pipeline((function* () {
    for (let i = 0; i < INFLATED / chunk.length; i++) yield chunk;
  })(), z);
  return Buffer.concat(out);
}

function post(url: string, path: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method: 'POST', path, headers: { ...headers, 'Content-Length': String(body.length) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('security: decompression bombs for every compressed input', () => {
  let collect: TestCollectApp;
  let cas: TestCasApp;
  let user: TestUser;
  const bombs = new Map<string, Buffer>();

  beforeAll(async () => {
    collect = await startTestCollectApp();
    cas = await startTestCasApp();
    user = await createTestUser(collect.app);
    for (const e of Object.keys(compressors) as Encoding[]) for (const fill of ['{', 'a']) bombs.set(`${e}${fill}`, await bomb(e, fill));
  }, 180_000);
  afterAll(async () => {
    await collect.close();
    await cas.close();
  });

  const routes: Array<{ label: string; url: () => string; path: string; type: string; fill: string; auth?: () => string }> = [
    { label: 'collect-api JSON submission', url: () => collect.url, path: '/api/v1/submissions', type: 'application/json', fill: '{', auth: () => user.token },
    { label: 'collect-api JSON form definition', url: () => collect.url, path: '/api/v1/forms', type: 'application/json', fill: '{', auth: () => user.token },
    { label: 'collect-api /o/token form body (anonymous)', url: () => collect.url, path: '/o/token', type: 'application/x-www-form-urlencoded', fill: 'a' },
    { label: 'collect-api registration (anonymous JSON)', url: () => collect.url, path: '/api/v1/profiles', type: 'application/json', fill: '{' },
    { label: 'cas login form (anonymous)', url: () => cas.url, path: '/interaction/x/login', type: 'application/x-www-form-urlencoded', fill: 'a' },
  ];
  const cases = routes.flatMap((r) => (Object.keys(compressors) as Encoding[]).map((encoding) => ({ ...r, encoding, name: `${r.label}, ${encoding}` })));

  it.each(cases)('$name: 413 at the body limit, the bomb never inflated whole', async ({ url, path, type, fill, auth, encoding }) => {
    const body = bombs.get(`${encoding}${fill}`)!;
    expect(body.length).toBeLessThan(1024 * 1024);
    global.gc?.();
    const before = process.memoryUsage().rss;
    const res = await post(url(), path, body, { 'Content-Type': type, 'Content-Encoding': encoding, ...(auth ? { Authorization: auth() } : {}) });
    const grown = process.memoryUsage().rss - before;
    expect(res.status).toBe(413);
    // A whole inflate would hold 256 MiB; the cap is 1 MiB (plus a zlib window and a chunk).
    expect(grown).toBeLessThan(INFLATED / 4);
  }, 120_000);

  it('a small compressed body still works (the cap counts decoded bytes, it does not refuse encodings)', async () => {
    const small = await new Promise<Buffer>((resolve) => {
      const out: Buffer[] = [];
      const z = createGzip();
      z.on('data', (c: Buffer) => out.push(c));
      z.on('end', () => resolve(Buffer.concat(out)));
      Readable.from([Buffer.from(JSON.stringify({ id_string: 'gz', title: 'G', fields: [{ name: 'a', type: 'text' }] }))]).pipe(z);
    });
    const res = await post(collect.url, '/api/v1/forms', small, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', Authorization: user.token });
    expect(res.status).toBe(201);
  });
});
