import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { Logger } from '@nestjs/common';
import yazl from 'yazl';
import type { ArchiveEntryRow } from '../media/media.repository.js';
import type { FileStorage } from '../storage/file-storage.js';
import { EntryWindow } from './entry-window.js';
import { readAhead } from '../storage/read-ahead.js';

/** Entries whose files are being read or queued at once (the archive reads them one by one). */
const IN_FLIGHT = 4;

/** An archive path segment from an instance uuid (client text): no separators, no dot segments. */
export function archiveSegment(raw: string): string {
  const cleaned = raw.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 200);
  return cleaned || '_';
}

/**
 * `<instance uuid>/<file name>` (the name the client gave, unique within a submission); a second
 * file with the same path (the same instance uuid on two forms) gets `-<attachment id>`.
 */
function entryName(row: ArchiveEntryRow, taken: Set<string>): string {
  let name = `${archiveSegment(row.uuid)}/${archiveSegment(row.name)}`;
  if (taken.has(name)) {
    const dot = name.lastIndexOf('.');
    name = dot > name.indexOf('/') + 1 ? `${name.slice(0, dot)}-${row.id}${name.slice(dot)}` : `${name}-${row.id}`;
  }
  taken.add(name);
  return name;
}

/**
 * Streams a ZIP of the files (docs/media.md, "Media archives") into `out`: entries stored
 * uncompressed (media is compressed already) with sizes from storage, ZIP64 when an archive
 * passes 4 GB (yazl decides), at most IN_FLIGHT entries queued ahead, each file of at most
 * 1 MB read whole when queued and a larger one opened when the archive reaches it (readAhead):
 * memory stays flat whatever the archive's size. A file the storage no longer has is left out
 * (and logged), not fatal.
 */
export async function writeMediaArchive(rows: AsyncIterable<ArchiveEntryRow[]>, storage: FileStorage, out: Writable, progress: (files: number) => void = () => undefined): Promise<void> {
  const logger = new Logger('MediaArchive');
  const zip = new yazl.ZipFile();
  const failure = new Promise<never>((_, reject) => {
    zip.outputStream.on('error', reject);
    out.on('error', reject);
  });
  failure.catch(() => undefined);
  // A client that left before the archive began emitted `close` already.
  const closed = out.destroyed ? Promise.resolve() : once(out, 'close').then(() => undefined);
  zip.outputStream.pipe(out);
  const taken = new Set<string>();
  const window = new EntryWindow(IN_FLIGHT);
  const settle = window.settle;
  let files = 0;
  for await (const batch of rows) {
    for (const row of batch) {
      if (out.destroyed) break;
      const info = await storage.stat(row.filename);
      if (!info) {
        logger.warn({ attachment: row.id }, 'media archive: stored file missing, left out');
        continue;
      }
      // `close` too: a client that stopped reading never lets the queued entries settle.
      await window.take(out, failure, closed);
      const opened = readAhead(info.size, { storage, path: row.filename });
      zip.addReadStreamLazy(entryName(row, taken), { size: info.size, compress: false, mtime: new Date(row.date_created) }, (cb) => {
        opened().then(
          (stream) => {
            stream.once('end', settle);
            stream.once('error', settle);
            cb(null, stream);
          },
          (err: Error) => {
            settle();
            cb(err, undefined as never);
          },
        );
      });
      progress(++files);
    }
    if (out.destroyed) break;
  }
  zip.end();
  await Promise.race([once(out, 'finish'), closed, failure]);
}
