import { tags, type Tag } from '../openrosa/xform-edit.js';
import { escapeXml } from '../openrosa/xml.js';

/**
 * The form's public key lives in the XForm's `<submission base64RsaPublicKey="...">` (a child
 * of `<model>`); ODK Collect, Enketo and ODK Web Forms encrypt whenever it is there. Read and
 * set on the text in one pass, so the rest of the document stays byte for byte as uploaded
 * (docs/encryption.md "Keys and form versions").
 */
interface Place {
  submission: Tag | null;
  modelEnd: Tag | null;
}

function locate(xml: string): Place {
  const path: string[] = [];
  let submission: Tag | null = null;
  for (const tag of tags(xml)) {
    if (tag.kind === 'close') {
      if (tag.name === 'model' && path.join('/') === 'html/head/model') return { submission, modelEnd: tag };
      path.pop();
      continue;
    }
    if (!submission && tag.name === 'submission' && path.join('/') === 'html/head/model') submission = tag;
    if (tag.kind === 'open') path.push(tag.name);
  }
  return { submission, modelEnd: null };
}

const KEY_ATTR = /(\s)base64RsaPublicKey\s*=\s*("([^"]*)"|'([^']*)')/;

/** The `base64RsaPublicKey` of the form's submission element, or null when the form is not encrypted. */
export function submissionPublicKey(xml: string): string | null {
  const { submission } = locate(xml);
  const m = submission ? KEY_ATTR.exec(submission.attrs) : null;
  const value = m ? (m[3] ?? m[4] ?? '').replace(/\s+/g, '') : '';
  return value || null;
}

/**
 * The XForm with `base64RsaPublicKey` set on its submission element (replaced, added, or a
 * `<submission>` added before `</model>`); with null, the attribute removed (encryption off
 * for later submissions). Null result: the document has no `<model>` in `<h:head>`.
 */
export function withSubmissionPublicKey(xml: string, base64Spki: string | null): string | null {
  const { submission, modelEnd } = locate(xml);
  if (!modelEnd) return null;
  const value = base64Spki === null ? '' : ` base64RsaPublicKey="${escapeXml(base64Spki)}"`;
  if (!submission) {
    if (base64Spki === null) return xml;
    return `${xml.slice(0, modelEnd.start)}<submission${value}/>${xml.slice(modelEnd.start)}`;
  }
  const attrs = KEY_ATTR.test(submission.attrs) ? submission.attrs.replace(KEY_ATTR, value) : `${value}${submission.attrs}`;
  const head = /^<[^\s/>]+/.exec(xml.slice(submission.start, submission.end))![0];
  return `${xml.slice(0, submission.start)}${head}${attrs}${submission.kind === 'empty' ? '/>' : '>'}${xml.slice(submission.end)}`;
}
