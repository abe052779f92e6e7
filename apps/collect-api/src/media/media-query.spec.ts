import { BadRequestException } from '@nestjs/common';
import { validateInput } from '@collect/platform';
import { acceptsExactly, listingShowsFieldXpath, listingUsesFilesStyle, MediaListQueryDto, mediaFilters } from './media-query.js';
import { contentDisposition } from '../storage/served-content.js';
import { parseRange } from './media-download.js';

describe('media query parsing', () => {
  const filters = (query: Record<string, unknown>) => validateInput(MediaListQueryDto, query).then(mediaFilters);
  const refusal = (query: Record<string, unknown>) => validateInput(MediaListQueryDto, query).then(() => null, (e: BadRequestException) => e.getResponse());

  it('parses filters and maps the file alias to document', async () => {
    expect(await filters({ xform: '3', merged_xform: '4', dataview: '5', instance: '6', type: 'FILE' })).toEqual({ xform: 3, mergedXform: 4, dataview: 5, instance: 6, type: 'document' });
    expect(await filters({ page: '2' })).toEqual({});
  });

  it('refuses non-positive, non-integer, repeated and oversized ids with the decided message', async () => {
    for (const v of ['0', '-3', 'x', '1e3', '2147483648', ['1', '2'], '']) {
      expect(await refusal({ xform: v })).toEqual({ detail: 'Invalid value for formid. It must be a positive integer.' });
    }
    expect(await refusal({ instance: '0', page: 'x' })).toEqual({ detail: 'Invalid value for instance. It must be a positive integer.' });
    expect(await refusal({ type: 'spreadsheet' })).toEqual({ detail: 'Invalid value for type. It must be one of image, audio, video, document, file.' });
  });

  it('decides URL style and field_xpath by the listing kind (spec §2.3)', () => {
    expect(listingUsesFilesStyle({ mergedXform: 1 })).toBe(true);
    expect(listingUsesFilesStyle({ dataview: 1 })).toBe(true);
    expect(listingUsesFilesStyle({ xform: 1, type: 'image' })).toBe(false);
    expect(listingShowsFieldXpath({ type: 'image' })).toBe(true);
    expect(listingShowsFieldXpath({ xform: 1 })).toBe(false);
  });

  it('streams only when Accept names the exact content type', () => {
    expect(acceptsExactly('image/jpeg', 'image/jpeg')).toBe(true);
    expect(acceptsExactly('text/html, IMAGE/JPEG;q=0.9', 'image/jpeg')).toBe(true);
    expect(acceptsExactly('image/jpeg;q=0', 'image/jpeg')).toBe(false);
    expect(acceptsExactly('image/*', 'image/jpeg')).toBe(false);
    expect(acceptsExactly('*/*', 'image/jpeg')).toBe(false);
    expect(acceptsExactly(undefined, 'image/jpeg')).toBe(false);
  });
});

describe('download headers', () => {
  it('parses single byte ranges and ignores what it need not honour', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-1,5-6', 100)).toBeNull();
    expect(parseRange('bytes=5-1', 100)).toBeNull();
    expect(parseRange('items=0-1', 100)).toBeNull();
    expect(parseRange(undefined, 100)).toBeNull();
  });

  it('writes Content-Disposition safely for any name', () => {
    expect(contentDisposition('photo.jpg')).toBe('attachment; filename="photo.jpg"');
    expect(contentDisposition('a"b\\c.jpg')).toBe('attachment; filename="a_b_c.jpg"; filename*=UTF-8\'\'a%22b%5Cc.jpg');
    expect(contentDisposition('résumé.pdf')).toBe("attachment; filename=\"r_sum_.pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf");
  });
});
