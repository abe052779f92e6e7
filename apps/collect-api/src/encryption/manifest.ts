import { HttpErrorWithHeaders } from '@collect/contracts';
import { DEFAULT_INPUT_LIMITS, parseXml, XmlInputError, type InputLimits, type XmlNode } from '../openrosa/xml.js';
import { failed, ok, type Outcome } from './decryption-failure.js';

/** ODK Collect writes its manifests in this namespace. */
export const COLLECT_MANIFEST_NS = 'http://www.opendatakit.org/xforms/encrypted';
/** Enketo, ODK Aggregate and ODK Briefcase write theirs in this one. */
export const SUBMISSIONS_MANIFEST_NS = 'http://opendatakit.org/submissions';
const MANIFEST_NAMESPACES = new Set([COLLECT_MANIFEST_NS, SUBMISSIONS_MANIFEST_NS]);

/** An RSA-8192 wrapping is 1,368 base64 characters; anything much longer is not a key or a signature. */
const MAX_BASE64_CHARS = 4_096;
const MAX_ID_CHARS = 1_024;
const MAX_FILE_NAME_CHARS = 255;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The submission manifest of an encrypted envelope (docs/encryption.md "The envelope"). */
export interface EnvelopeManifest {
  namespace: string;
  formId: string;
  /** Null when the manifest has no `version` attribute (the form has none). */
  version: string | null;
  instanceId: string;
  /** As written in the manifest: the signature covers this text. */
  base64EncryptedKey: string;
  encryptedKey: Buffer;
  /** Media parts in manifest order (their ciphering order): names as sent, `.enc` included. */
  mediaFiles: string[];
  /** The submission XML part, ciphered last. */
  xmlFile: string;
  /** Null when the manifest has none (verification then fails with `signature_missing`). */
  encryptedSignature: Buffer | null;
}

/** True when a parsed submission root declares itself encrypted (`encrypted="yes"`). */
export function isEncryptedRoot(root: XmlNode): boolean {
  return root.attrs.encrypted?.trim().toLowerCase() === 'yes';
}

/** Reads a manifest from text: one linear, capped pass (docs/security.md "Parsers of user input"). */
export function parseManifest(xml: string, limits: Pick<InputLimits, 'maxNodes' | 'maxDepth'> = DEFAULT_INPUT_LIMITS): Outcome<EnvelopeManifest> {
  let root: XmlNode;
  try {
    root = parseXml(xml, limits);
  } catch (err) {
    if (err instanceof XmlInputError) return invalid(err.message);
    // Over INPUT_MAX_NODES: the parser's 413 says which limit.
    if (err instanceof HttpErrorWithHeaders) return invalid((err.getResponse() as { detail: string }).detail);
    throw err;
  }
  return manifestFromXml(root);
}

/** Reads a manifest from an already parsed document (intake parses the XML part once). */
export function manifestFromXml(root: XmlNode): Outcome<EnvelopeManifest> {
  const namespace = namespaceOf(root, []);
  if (namespace === undefined || !MANIFEST_NAMESPACES.has(namespace)) {
    return invalid(`the manifest's root must be in the namespace ${COLLECT_MANIFEST_NS} or ${SUBMISSIONS_MANIFEST_NS}`);
  }
  if (!isEncryptedRoot(root)) return invalid('the manifest\'s root must carry encrypted="yes"');
  const formId = root.attrs.id?.trim();
  if (!formId || formId.length > MAX_ID_CHARS) return invalid('the manifest\'s root must carry the form id (attribute "id")');
  const version = root.attrs.version !== undefined ? root.attrs.version.trim() : null;
  if (version !== null && version.length > MAX_ID_CHARS) return invalid('the manifest\'s version is too long');

  // One pass over the root's children, each kept by its local name.
  let keyNode: XmlNode | undefined;
  let meta: XmlNode | undefined;
  let xmlFileNode: XmlNode | undefined;
  let signatureNode: XmlNode | undefined;
  const mediaFiles: string[] = [];
  const seen = new Set<string>();
  for (const c of root.children) {
    if (c.name === 'base64EncryptedKey') {
      if (keyNode) return invalid('the manifest has more than one base64EncryptedKey');
      keyNode = c;
    } else if (c.name === 'meta') meta ??= c;
    else if (c.name === 'encryptedXmlFile') {
      if (xmlFileNode) return invalid('the manifest has more than one encryptedXmlFile');
      xmlFileNode = c;
    } else if (c.name === 'base64EncryptedElementSignature') {
      if (signatureNode) return invalid('the manifest has more than one base64EncryptedElementSignature');
      signatureNode = c;
    } else if (c.name === 'media') {
      // Collect and Enketo put each file in a <media> of its own; one <media> with several is read alike.
      for (const f of c.children) {
        if (f.name !== 'file') continue;
        const name = f.text;
        const bad = fileNameProblem(name);
        if (bad) return invalid(`media file ${JSON.stringify(name.slice(0, 64))}: ${bad}`);
        if (seen.has(name)) return invalid(`the manifest names the media file ${name} twice`);
        seen.add(name);
        mediaFiles.push(name);
      }
    }
  }

  if (!keyNode) return invalid('the manifest has no base64EncryptedKey');
  const encryptedKey = decodeBase64(keyNode.text);
  if (!encryptedKey) return invalid('base64EncryptedKey is not base64');

  const instanceId = (meta?.children.find((c) => c.name === 'instanceID')?.text ?? root.attrs.instanceID ?? '').trim();
  if (!instanceId || instanceId.length > MAX_ID_CHARS) return invalid('the manifest has no meta/instanceID');

  if (!xmlFileNode) return invalid('the manifest has no encryptedXmlFile');
  const xmlFile = xmlFileNode.text;
  const badXml = fileNameProblem(xmlFile);
  if (badXml) return invalid(`encryptedXmlFile: ${badXml}`);
  if (seen.has(xmlFile)) return invalid(`the manifest names ${xmlFile} both as media and as the encrypted XML file`);

  let encryptedSignature: Buffer | null = null;
  if (signatureNode) {
    encryptedSignature = decodeBase64(signatureNode.text);
    if (!encryptedSignature) return invalid('base64EncryptedElementSignature is not base64');
  }

  return ok({ namespace, formId, version, instanceId, base64EncryptedKey: keyNode.text, encryptedKey, mediaFiles, xmlFile, encryptedSignature });
}

/** The plaintext name of a part: the signature names files without `.enc`. */
export function plaintextName(partName: string): string {
  return partName.endsWith('.enc') ? partName.slice(0, -4) : partName;
}

function invalid(detail: string): Outcome<EnvelopeManifest> {
  return failed('manifest_invalid', `The encrypted submission's manifest is not valid: ${detail}.`);
}

/** Part names become attachment names and download paths: plain file names only. */
function fileNameProblem(name: string): string | null {
  if (!name) return 'empty file name';
  if (name.length > MAX_FILE_NAME_CHARS) return `file name longer than ${MAX_FILE_NAME_CHARS} characters`;
  if (name === '.' || name === '..' || /[/\\\u0000-\u001f]/.test(name)) return 'not a plain file name';
  return null;
}

/** Strict base64 (whitespace allowed between characters, as wrapped output has); null otherwise. */
function decodeBase64(text: string): Buffer | null {
  if (text.length > MAX_BASE64_CHARS) return null;
  const compact = text.replace(/\s+/g, '');
  if (!compact || compact.length % 4 !== 0 || !BASE64.test(compact)) return null;
  return Buffer.from(compact, 'base64');
}

/** The namespace an element is in, from its own declarations or its ancestors' (nearest first). */
function namespaceOf(node: XmlNode, ancestors: XmlNode[]): string | undefined {
  const colon = node.qname.indexOf(':');
  const attr = colon >= 0 ? `xmlns:${node.qname.slice(0, colon)}` : 'xmlns';
  for (const n of [node, ...ancestors]) {
    const ns = n.attrs[attr];
    if (ns !== undefined) return ns.trim();
  }
  return undefined;
}
