import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';

/** A plain data page as built: its response body (the JSON array, UTF-8), its total, its ETag, and the snapshot it was read in. */
export interface CachedPage {
  snapshot: string;
  total: number;
  body: Buffer;
  etag: string;
}

/** A strong ETag of a page's body (and total): equal bodies of equal totals, equal tags, whichever process built them. */
export function pageEtag(body: Buffer, total: number): string {
  return `"${createHash('sha256').update(body).update(`\n${total}`).digest('base64url').slice(0, 32)}"`;
}

/** Pages kept per process, and bytes of JSON in all of them (a page of 500 rows is some 300,000). */
const MAX_PAGES = 64;
const MAX_BYTES = 16_000_000;
/** A page larger than this is not kept. */
const MAX_PAGE_BYTES = 2_000_000;

/**
 * The last plain pages (no query, sort or fields) this process built, least recently used
 * dropped first. An entry is only a candidate: SubmissionDataService serves it after
 * SubmissionDataRepository.stillCurrent has checked, in the database, that no change of the
 * form was committed since the page's snapshot and that the caller's role holds, so a page
 * written on another replica, or a role taken away anywhere, is seen at once
 * (docs/data-api.md, "How it runs"). No invalidation messages are needed for correctness.
 */
@Injectable()
export class DataPageCache {
  private readonly pages = new Map<string, CachedPage>();
  private bytes = 0;

  /** The key of a page: the form as the cache of forms knows it (fields decide `_geolocation`), and the window. */
  static key(form: { id: number; version: string; dateModified: Date }, offset: number, limit: number): string {
    return `${form.id}/${form.version}/${form.dateModified.getTime()}/${offset}/${limit}`;
  }

  get(key: string): CachedPage | undefined {
    const page = this.pages.get(key);
    if (page) {
      this.pages.delete(key);
      this.pages.set(key, page);
    }
    return page;
  }

  set(key: string, page: CachedPage): void {
    this.delete(key);
    if (page.body.length > MAX_PAGE_BYTES) return;
    this.pages.set(key, page);
    this.bytes += page.body.length;
    for (const [oldest, old] of this.pages) {
      if (this.pages.size <= MAX_PAGES && this.bytes <= MAX_BYTES) break;
      this.pages.delete(oldest);
      this.bytes -= old.body.length;
    }
  }

  delete(key: string): void {
    const page = this.pages.get(key);
    if (!page) return;
    this.pages.delete(key);
    this.bytes -= page.body.length;
  }
}
