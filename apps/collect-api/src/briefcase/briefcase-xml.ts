import { escapeXml } from '../openrosa/xml.js';

/** The namespace of ODK Aggregate's submission documents, as Briefcase reads them. */
export const SUBMISSIONS_NS = 'http://opendatakit.org/submissions';

/** `<idChunk>` of `/view/submissionList`: instance ids oldest first, then the cursor to continue from. */
export function idChunkXml(instanceIds: string[], cursor: string): string {
  const ids = instanceIds.map((id) => `<id>${escapeXml(id)}</id>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?><idChunk xmlns="${SUBMISSIONS_NS}"><idList>${ids}</idList><resumptionCursor>${escapeXml(cursor)}</resumptionCursor></idChunk>`;
}

export interface BriefcaseMediaFile {
  filename: string;
  md5Hex: string;
  downloadUrl: string;
}

/**
 * `<submission>` of `/view/downloadSubmission`: the stored instance (the manifest for an
 * encrypted one) inside `<data>`, its root carrying `instanceID` and `submissionDate` as the
 * Django implementation and Aggregate add them, then one `<mediaFile>` per stored file.
 */
export function submissionXml(instanceXml: string, attrs: { instanceId: string; submissionDate: string }, media: BriefcaseMediaFile[]): string {
  const files = media
    .map((m) => `<mediaFile><filename>${escapeXml(m.filename)}</filename><hash>md5:${m.md5Hex}</hash><downloadUrl>${escapeXml(m.downloadUrl)}</downloadUrl></mediaFile>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><submission xmlns="${SUBMISSIONS_NS}" xmlns:orx="http://openrosa.org/xforms"><data>${withRootAttributes(instanceXml, attrs)}</data>${files}</submission>`;
}

/**
 * The instance without its XML declaration (it cannot stand inside `<data>`), with the root's
 * start tag given `instanceID` and `submissionDate` unless it has them already. Comments and
 * processing instructions before the root are dropped with the declaration. Stored instances
 * passed the intake's parser (no DOCTYPE), so the root is the first `<` followed by a name.
 */
export function withRootAttributes(xml: string, attrs: { instanceId: string; submissionDate: string }): string {
  let at = 0;
  for (;;) {
    while (at < xml.length && /\s/.test(xml[at]!)) at++;
    if (xml.startsWith('<?', at)) at = closeOf(xml, at, '?>');
    else if (xml.startsWith('<!--', at)) at = closeOf(xml, at, '-->');
    else break;
  }
  const body = xml.slice(at);
  const tagEnd = startTagEnd(body);
  if (!body.startsWith('<') || tagEnd < 0) return body;
  const selfClosing = body[tagEnd - 1] === '/';
  const insertAt = selfClosing ? tagEnd - 1 : tagEnd;
  const tag = body.slice(0, insertAt);
  let extra = '';
  if (!/\sinstanceID\s*=/.test(tag)) extra += ` instanceID="${escapeXml(attrs.instanceId)}"`;
  if (!/\ssubmissionDate\s*=/.test(tag)) extra += ` submissionDate="${escapeXml(attrs.submissionDate)}"`;
  return `${tag}${extra}${body.slice(insertAt)}`;
}

function closeOf(xml: string, from: number, close: string): number {
  const i = xml.indexOf(close, from);
  return i < 0 ? xml.length : i + close.length;
}

/** Index of the `>` ending the first start tag (quoted attribute values may hold `>`), or -1. */
function startTagEnd(body: string): number {
  let quote: string | null = null;
  for (let i = 1; i < body.length; i++) {
    const c = body[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i;
  }
  return -1;
}
