import { createHash, type KeyObject } from 'node:crypto';
import type { DecryptedFile } from '../encryption/crypto-threads.js';
import type { DecryptionFailure, Outcome } from '../encryption/decryption-failure.js';
import { EnvelopeDecryptor, unwrapAhead, type IvReading, type UnwrappedAhead } from '../encryption/envelope-decryptor.js';
import { plaintextName, type EnvelopeManifest } from '../encryption/manifest.js';
import type { EnvelopeStore, EnvelopeWithParts } from '../encrypted-submissions/envelope-store.js';
import type { FormField } from '../forms/form.entity.js';
import { parseXml, type XmlNode } from '../openrosa/xml.js';
import type { SubmissionRecord } from '../submissions/submission.entity.js';
import { recordFromXml } from '../submissions/submission-record.js';

/** Envelopes read per statement. */
const BATCH = 100;
/**
 * Envelopes prepared ahead of their decryption: the AES key (and signature) unwrapped and the XML
 * part read and decrypted in the crypto threads, in one message each (the RSA operations, most of
 * an envelope's work, and the reads of small files, whose trips to the thread pool take more time
 * than their bytes, then run beside this thread; docs/encryption.md, "Decrypting without a
 * server-held key").
 */
const READ_AHEAD = 8;

export type DecryptStatus = 'decrypted' | 'incomplete' | 'failed';

/** One envelope as the decrypt export sees it: its answers when the XML part decrypted, what is missing, why it failed. */
export interface DecryptedSubmission {
  envelope: EnvelopeWithParts;
  /** Null when the envelope could not be opened (no key given for it, or its key does not unwrap). */
  decryptor: EnvelopeDecryptor | null;
  /** The IV reading that decrypted the XML part (media parts are read alike). */
  reading: IvReading;
  record: SubmissionRecord | null;
  status: DecryptStatus;
  /** Plaintext names of the parts that have not arrived. */
  missing: string[];
  error: DecryptionFailure | null;
  /** MD5 hex of the XML part's plaintext, for the signature the archive checks. */
  xmlMd5: string | null;
}

/**
 * What one request learnt of an envelope in an earlier pass (the export reads the envelopes once
 * per CSV or sheet pass and once for the media): the RSA unwrapping, the dearest step, is done
 * once. At most OPENED_KEPT envelopes are kept (a few hundred bytes each); beyond, they are
 * opened again.
 */
export type OpenedEnvelopes = Map<number, Omit<DecryptedSubmission, 'envelope' | 'record'>>;
/** About 1.5 kB each (the opened manifest and key): 15 MB at most. */
const OPENED_KEPT = 10_000;

/**
 * The form's envelopes, oldest first, each opened with the key it was made for among `keys`
 * and its XML part decrypted into answers (docs/encryption.md "Decrypting without a server-held
 * key"). Media parts are left for the archive to stream. A missing part is not a failure: the
 * answers are given when the XML part is there, and the missing files are named. With
 * `signatures`, the element signature of an envelope with media is unwrapped with its key, for
 * the archive, which checks it once the media have streamed.
 */
export async function* decryptedSubmissions(
  store: EnvelopeStore,
  formId: number,
  keys: ReadonlyMap<string, KeyObject>,
  fields: FormField[],
  opened: OpenedEnvelopes,
  o: { answers: boolean; signatures?: boolean },
): AsyncGenerator<DecryptedSubmission[]> {
  for (let after: number | null = 0; after !== null; ) {
    const page = await store.list(formId, { afterId: after, limit: BATCH });
    const envelopes = page.envelopes;
    const out: DecryptedSubmission[] = [];
    // The media pass needs no answers: what an earlier pass learnt is enough.
    const needed = envelopes.map((e) => !(opened.has(e.submissionId) && !o.answers));
    const reads: Array<Promise<Prepared> | undefined> = [];
    const readAhead = (i: number) => {
      if (i < envelopes.length && needed[i]) reads[i] = prepared(store, envelopes[i]!, keys, opened.get(envelopes[i]!.submissionId)?.decryptor ?? null, !!o.signatures);
    };
    for (let i = 0; i < READ_AHEAD; i++) readAhead(i);
    for (const [i, envelope] of envelopes.entries()) {
      readAhead(i + READ_AHEAD);
      const known = opened.get(envelope.submissionId);
      if (!needed[i]) {
        out.push({ ...known!, envelope, record: null });
        continue;
      }
      const ready = await reads[i]!;
      reads[i] = undefined;
      const d = decryptOne(envelope, keys, fields, known?.decryptor ?? null, ready);
      if (opened.size < OPENED_KEPT || known) opened.set(envelope.submissionId, { decryptor: d.decryptor, reading: d.reading, status: d.status, missing: d.missing, error: d.error, xmlMd5: d.xmlMd5 });
      out.push(d);
    }
    if (out.length) yield out;
    after = page.next;
  }
}

/**
 * What is made ready for an envelope ahead of decryptOne: its manifest parsed, unless an earlier
 * pass opened it its key (and its signature, without media or with `signatures`) unwrapped with
 * the one key it can be for, and its XML part: read and decrypted in a crypto thread with that
 * key, or with the decryptor an earlier pass opened, its bytes otherwise (and where that gave
 * nothing back, or Enketo's IV differs and may be needed).
 */
interface Prepared {
  manifest: Outcome<EnvelopeManifest>;
  xmlBytes: Buffer | null;
  ahead?: { key: KeyObject; unwrapped: UnwrappedAhead };
  /** The decryptor opened here from what was unwrapped ahead, and the XML part it decrypted with Collect's IV. */
  opened?: { decryptor: EnvelopeDecryptor; xml: DecryptedFile | null };
}

async function prepared(store: EnvelopeStore, envelope: EnvelopeWithParts, keys: ReadonlyMap<string, KeyObject>, known: EnvelopeDecryptor | null, signatures: boolean): Promise<Prepared> {
  const manifest = store.manifestOf(envelope);
  const key = manifest.ok && !known ? theKeyOf(envelope, keys) : null;
  // The signature of an envelope with media is checked by the archive once they have streamed (decrypted-archive.ts).
  const signature = manifest.ok && (manifest.value.mediaFiles.length === 0 || signatures);
  const file = manifest.ok ? xmlFileOf(store, envelope, manifest.value.xmlFile) : null;
  const unwrapped = key && manifest.ok ? await unwrapAhead(manifest.value, key, { signature, xml: file ? { file, maxBytes: Number.POSITIVE_INFINITY } : null }) : null;
  const ahead = key && unwrapped ? { key, unwrapped } : undefined;
  // Opened only from a key unwrapped ahead: any other opening tries every reading, on this thread, in decryptOne.
  const fresh = manifest.ok && ahead?.unwrapped.aesKey ? EnvelopeDecryptor.open(manifest.value, ahead.key, ahead.unwrapped) : null;
  const decryptor = known ?? (fresh?.ok ? fresh.value : null);
  const xml = known ? await xmlInThread(known, file) : fresh?.ok ? unwrapped!.xml : null;
  const xmlBytes = xml && !decryptor!.enketoIvDiffers(decryptor!.manifest.xmlFile) ? null : await xmlCiphertext(store, envelope);
  return { manifest, xmlBytes, ...(ahead ? { ahead } : {}), ...(decryptor ? { opened: { decryptor, xml } } : {}) };
}

/** The local file of the envelope's XML part (the last of its parts) when it has arrived and is the manifest's `xmlFile`, else null. */
function xmlFileOf(store: EnvelopeStore, envelope: EnvelopeWithParts, xmlFile: string): string | null {
  const name = envelope.parts[envelope.parts.length - 1] ?? '';
  const part = envelope.stored.get(name);
  return part && name === xmlFile ? store.localPathOf(part) : null;
}

/** The XML part (local file `file`) decrypted in a crypto thread by a decryptor an earlier pass opened, or null. */
function xmlInThread(decryptor: EnvelopeDecryptor, file: string | null): Promise<DecryptedFile | null> {
  return file ? decryptor.decryptFileInThread(decryptor.manifest.xmlFile, file, Number.POSITIVE_INFINITY).catch(() => null) : Promise.resolve(null);
}

/** The keys the envelope may have been made for: the one of its key id, else every key given. */
function candidateKeys(envelope: EnvelopeWithParts, keys: ReadonlyMap<string, KeyObject>): KeyObject[] {
  return envelope.keyId ? [keys.get(envelope.keyId)].filter((k): k is KeyObject => !!k) : [...keys.values()];
}

/** The one key the envelope can be for, or null when there is none or more than one to try. */
function theKeyOf(envelope: EnvelopeWithParts, keys: ReadonlyMap<string, KeyObject>): KeyObject | null {
  const candidates = candidateKeys(envelope, keys);
  return candidates.length === 1 ? candidates[0]! : null;
}

/** The stored ciphertext of the envelope's XML part (the last of its parts), or null when it has not arrived. */
function xmlCiphertext(store: EnvelopeStore, envelope: EnvelopeWithParts): Promise<Buffer | null> {
  const part = envelope.stored.get(envelope.parts[envelope.parts.length - 1] ?? '');
  // A stored file that cannot be read counts as not arrived (the export names it missing).
  return part ? store.partBytes(part).catch(() => null) : Promise.resolve(null);
}

function decryptOne(
  envelope: EnvelopeWithParts,
  keys: ReadonlyMap<string, KeyObject>,
  fields: FormField[],
  known: EnvelopeDecryptor | null,
  { manifest: parsed, xmlBytes, ahead, opened: early }: Prepared,
): DecryptedSubmission {
  const missing = envelope.missing.map(plaintextName);
  const result = (status: DecryptStatus, rest: Partial<DecryptedSubmission>): DecryptedSubmission => ({ envelope, decryptor: null, reading: 'collect', record: null, missing, error: null, xmlMd5: null, ...rest, status });
  if (!parsed.ok) return result('failed', { error: parsed.failure });
  const manifest: EnvelopeManifest = parsed.value;
  let decryptor: EnvelopeDecryptor | null = known ?? early?.decryptor ?? null;
  for (const key of decryptor ? [] : candidateKeys(envelope, keys)) {
    // What was unwrapped ahead with this key is what open's first reading would give (unwrapAhead).
    const opened = EnvelopeDecryptor.open(manifest, key, ahead?.key === key ? ahead.unwrapped : undefined);
    if (opened.ok) {
      decryptor = opened.value;
      break;
    }
  }
  if (!decryptor) return result('failed', { error: { reason: 'key_unwrap_failed', message: 'This submission was encrypted for another key than the one given.' } });
  // The manifest names the XML part last, as `parts` holds it (checked: a manifest is what decides).
  if (manifest.xmlFile !== envelope.parts[envelope.parts.length - 1]) return result('failed', { decryptor, error: { reason: 'manifest_invalid', message: 'The stored parts do not follow the manifest.' } });
  // Collect's reading of the XML part, decrypted ahead in a crypto thread by this decryptor.
  const inThread = early?.decryptor === decryptor ? early.xml : null;
  if (!xmlBytes && !inThread) return result('incomplete', { decryptor });
  let failure: DecryptionFailure | null = null;
  // A wrong IV garbles only the first block: Enketo's IV is tried when Collect's gives no XML (docs/encryption.md "Parts").
  for (const reading of decryptor.enketoIvDiffers(manifest.xmlFile) ? (['collect', 'enketo'] as const) : (['collect'] as const)) {
    const fromThread = reading === 'collect' ? inThread : null;
    const plain = fromThread ? { ok: true as const, value: fromThread.plaintext } : xmlBytes ? decryptor.decryptPart(manifest.xmlFile, xmlBytes, reading) : null;
    if (!plain) continue;
    if (!plain.ok) {
      failure ??= plain.failure;
      continue;
    }
    const root = parsedInstance(plain.value);
    if (!root) {
      failure ??= { reason: 'part_undecryptable', message: `The part ${manifest.xmlFile} decrypts to no XML document.`, file: manifest.xmlFile };
      continue;
    }
    const record = recordFromXml(root, { fields });
    const xmlMd5 = fromThread ? fromThread.md5Hex : createHash('md5').update(plain.value).digest('hex');
    // Without media the signature is checked here at once (the XML is in hand); with media the archive checks it.
    if (manifest.mediaFiles.length === 0) {
      const verified = decryptor.verify(new Map([[manifest.xmlFile, xmlMd5]]));
      if (!verified.ok) return result('failed', { decryptor, reading, error: verified.failure, xmlMd5 });
    }
    return result(missing.length ? 'incomplete' : 'decrypted', { decryptor, reading, record, xmlMd5 });
  }
  return result('failed', { decryptor, error: failure });
}

function parsedInstance(bytes: Buffer): XmlNode | null {
  try {
    return parseXml(bytes.toString('utf8'));
  } catch {
    return null;
  }
}
