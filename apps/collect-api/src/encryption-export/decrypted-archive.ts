import { once } from 'node:events';
import { PassThrough, pipeline, Readable, type Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import yazl from 'yazl';
import type { DecryptionFailure } from '../encryption/decryption-failure.js';
import type { PartDecipher } from '../encryption/part-cipher.js';
import { plaintextName } from '../encryption/manifest.js';
import type { EnvelopeStore } from '../encrypted-submissions/envelope-store.js';
import { writeCsv, type ExportPlan } from '../exports/data-export.js';
import type { ExportOptions } from '../exports/export-columns.js';
import { archiveSegment } from '../exports/media-archive.js';
import { READ_AHEAD_MAX_BYTES } from '../storage/read-ahead.js';
import { formulaGuard } from '../exports/spreadsheet-cells.js';
import type { DecryptedSubmission } from './decrypted-submissions.js';
import { EntryWindow } from '../exports/entry-window.js';

/** Media entries being read or queued at once (as the plaintext media archive). */
const IN_FLIGHT = 4;

/** A line of `decryption-report.csv`: only submissions that are not whole and verified get one. */
type ReportLine = [uuid: string, status: string, missing: string, reason: string, message: string];

/**
 * The decrypted ZIP (docs/encryption.md "Decrypting without a server-held key"):
 * `submissions.csv` (the CSV export of the decrypted answers), each decrypted media file as
 * `<instance uuid>/<file name>` (at most IN_FLIGHT queued: memory stays flat; a part of at most
 * READ_AHEAD_MAX_BYTES on local storage read and decrypted whole in a crypto thread from when
 * its entry is queued, any other streamed from its stored ciphertext through the decipher, read
 * as readAhead reads it), and `decryption-report.csv`
 * naming the submissions whose parts are missing or did not decrypt or verify. A media file whose
 * bytes fail to decrypt ends where the failure was found and is named in the report.
 */
export async function writeDecryptedArchive(plan: ExportPlan, o: ExportOptions, passes: () => AsyncIterable<DecryptedSubmission[]>, store: EnvelopeStore, out: Writable): Promise<void> {
  const zip = new yazl.ZipFile();
  const failure = new Promise<never>((_, reject) => {
    zip.outputStream.on('error', reject);
    out.on('error', reject);
  });
  failure.catch(() => undefined);
  const closed = once(out, 'close').then(() => undefined);
  zip.outputStream.pipe(out);
  const now = new Date();

  const csv = new PassThrough();
  // Parts being read: a client that leaves stops them (and the CSV), so nothing waits on a zip nobody reads.
  const reading = new Set<Readable>();
  out.once('close', () => {
    csv.destroy();
    for (const r of reading) r.destroy();
  });
  zip.addReadStream(csv, 'submissions.csv', { mtime: now });
  await Promise.race([writeCsv(plan, o, csv), failure, closed]);

  // Each envelope's line is known once its media are written; the next envelope's entries are queued meanwhile.
  const report: Array<Promise<ReportLine | null>> = [];
  const taken = new Set<string>();
  const window = new EntryWindow(IN_FLIGHT);
  for await (const batch of passes()) {
    for (const d of batch) {
      if (out.destroyed) break;
      const media = await addMedia(d, store, zip, taken, now, reading, () => window.take(out, failure, closed), window.settle);
      report.push(media.written.then((f) => reportLine(d, f)));
    }
    if (out.destroyed) break;
  }
  const inert = formulaGuard(o.escapeFormulas);
  const lines = (await Promise.race([Promise.all(report), failure, closed])) ?? [];
  const rows = lines.filter((l): l is ReportLine => l !== null).map((l) => inert(l));
  zip.addBuffer(Buffer.from(stringify([['_uuid', 'status', 'missing_files', 'reason', 'message'], ...rows], { bom: false })), 'decryption-report.csv', { mtime: now });
  zip.end();
  await Promise.race([once(out, 'finish'), closed, failure]);
}

/**
 * Queues the envelope's media entries; resolves (once they are all written) to the failure of
 * the first that did not decrypt, or of the signature over all parts, or null.
 */
async function addMedia(d: DecryptedSubmission, store: EnvelopeStore, zip: yazl.ZipFile, taken: Set<string>, mtime: Date, reading: Set<Readable>, slot: () => Promise<void>, settle: () => void): Promise<{ written: Promise<DecryptionFailure | null> }> {
  const decryptor = d.decryptor;
  if (!decryptor || d.status === 'failed') return { written: Promise.resolve(null) };
  const md5s = new Map<string, string>();
  if (d.xmlMd5) md5s.set(decryptor.manifest.xmlFile, d.xmlMd5);
  // Only a whole envelope's signature is checked. It was unwrapped with the key (decryptedSubmissions' `signatures`), or is now, in a crypto thread, while the media stream.
  const checked = !d.missing.length && !!d.xmlMd5;
  const signature = checked ? decryptor.unwrapSignatureAhead() : Promise.resolve();
  const done: Array<Promise<DecryptionFailure | null>> = [];
  for (const name of decryptor.manifest.mediaFiles) {
    const part = d.envelope.stored.get(name);
    if (!part) continue;
    await slot();
    let written!: (failure: DecryptionFailure | null) => void;
    done.push(new Promise<DecryptionFailure | null>((resolve) => (written = resolve)));
    const finish = (failure: DecryptionFailure | null) => {
      settle();
      written(failure);
    };
    // Read ahead and deciphered on the event loop, as it reaches the entry.
    const streamed = () => {
      const decipher = decryptor.decipher(name, d.reading)!;
      const entry = new PassThrough();
      decipher.once('error', (err: Error & { failure?: DecryptionFailure }) => {
        entry.end();
        finish(err.failure ?? { reason: 'part_undecryptable', message: err.message, file: name });
      });
      decipher.once('end', () => {
        if (decipher.md5Hex) md5s.set(name, decipher.md5Hex);
        finish(null);
      });
      decipher.pipe(entry);
      return partEntry({ opened: store.readPartAhead(part), decipher, entry }, reading);
    };
    // A small part on local storage is read and decrypted whole in a crypto thread from now on.
    const file = part.size <= READ_AHEAD_MAX_BYTES ? store.localPathOf(part) : null;
    const whole = file ? decryptor.decryptFileInThread(name, file, READ_AHEAD_MAX_BYTES, d.reading).catch(() => null) : null;
    const entryFunction = whole
      ? wholeEntry(whole, (md5Hex) => {
          md5s.set(name, md5Hex);
          finish(null);
        }, streamed)
      : streamed();
    zip.addReadStreamLazy(entryName(d.envelope.uuid, plaintextName(name), taken), { compress: false, mtime }, entryFunction);
  }
  const written = Promise.all(done).then(async (failures) => {
    const first = failures.find((f) => f !== null);
    if (first) return first;
    if (!checked) return null;
    await signature;
    const verified = decryptor.verify(md5s);
    return verified.ok ? null : verified.failure;
  });
  return { written };
}

/**
 * The entry's stream function: pipes the part's ciphertext through its decipher into `entry`.
 * It lets go of them once called: yazl keeps every entry's function until the archive ends, and
 * held, a decipher and two streams grew the heap by about 11 kB per photo (docs/encryption.md,
 * "Decrypting without a server-held key").
 */
export function partEntry(given: { opened: () => Promise<Readable>; decipher: PartDecipher; entry: PassThrough }, reading: Set<Readable>): EntryStream {
  return entryOnce(given, ({ opened, decipher, entry }, cb) =>
    opened().then(
      (stream) => {
        reading.add(stream);
        // pipeline: an error or a destroy on either side ends both (the decipher reports it).
        pipeline(stream, decipher, () => reading.delete(stream));
        cb(null, entry);
      },
      (err: Error) => {
        decipher.destroy(err);
        cb(null, entry);
      },
    ),
  );
}

/**
 * The entry's stream function for a part decrypted in a crypto thread: its plaintext, once there
 * (`done` gets its MD5); where the thread gave nothing back, the streamed way (`streamed`), which
 * finds and reports what is wrong with the part. It lets go of the plaintext once called, as
 * partEntry does.
 */
export function wholeEntry(whole: Promise<{ plaintext: Buffer; md5Hex: string } | null>, done: (md5Hex: string) => void, streamed: () => EntryStream): EntryStream {
  return entryOnce({ whole, streamed }, (from, cb) =>
    void from.whole.then((part) => {
      if (!part) return from.streamed()(cb);
      done(part.md5Hex);
      cb(null, Readable.from([part.plaintext], { objectMode: false }));
    }),
  );
}

/** A yazl entry's stream function: called once, when the archive reaches the entry. */
type EntryStream = (cb: (err: Error | null, stream: Readable) => void) => void;

/**
 * The stream function that opens `given` with `open` on its one call and holds it no longer:
 * yazl keeps every entry's function until the archive ends. A second call is an error.
 */
function entryOnce<T>(given: T, open: (given: T, cb: Parameters<EntryStream>[0]) => void): EntryStream {
  let held: T | null = given;
  return (cb) => {
    if (held === null) return cb(new Error('a zip entry was read twice'), undefined as never);
    const from = held;
    held = null;
    open(from, cb);
  };
}

function reportLine(d: DecryptedSubmission, mediaFailure: DecryptionFailure | null): ReportLine | null {
  const error = d.error ?? mediaFailure;
  const status = error ? 'failed' : d.status;
  if (status === 'decrypted') return null;
  return [d.envelope.uuid, status, d.missing.join(' '), error?.reason ?? '', error?.message ?? ''];
}

function entryName(uuid: string, name: string, taken: Set<string>): string {
  let entry = `${archiveSegment(uuid)}/${archiveSegment(name)}`;
  for (let n = 2; taken.has(entry); n++) entry = `${archiveSegment(uuid)}/${n}-${archiveSegment(name)}`;
  taken.add(entry);
  return entry;
}
