import { extensionOf, mediaDownloadUrls, parseMediaPathSegment, requestBaseUrl } from './media-urls.js';

describe('media URLs', () => {
  const a = { id: 7, filename: 'alice/attachments/3_survey/My photo.JPG' };

  it('builds the two §2.3 styles from one place', () => {
    expect(mediaDownloadUrls(a, 'https://x.org', 'media')).toEqual({
      download_url: 'https://x.org/api/v1/media/7.jpg',
      small_download_url: 'https://x.org/api/v1/media/7-small.jpg',
      medium_download_url: 'https://x.org/api/v1/media/7-medium.jpg',
    });
    const f = 'alice%2Fattachments%2F3_survey%2FMy%20photo.JPG';
    expect(mediaDownloadUrls(a, 'https://x.org', 'files')).toEqual({
      download_url: `https://x.org/api/v1/files/7?filename=${f}`,
      small_download_url: `https://x.org/api/v1/files/7?filename=${f}&suffix=small`,
      medium_download_url: `https://x.org/api/v1/files/7?filename=${f}&suffix=medium`,
    });
    expect(mediaDownloadUrls({ id: 8, filename: 'a/noext' }, 'b', 'media').small_download_url).toBe('b/api/v1/media/8-small');
  });

  it('reads extensions and path segments', () => {
    expect(extensionOf('a/b.tar.GZ')).toBe('gz');
    expect(extensionOf('a/.hidden')).toBe('');
    expect(extensionOf('a/b.')).toBe('');
    expect(parseMediaPathSegment('12')).toEqual({ id: 12, variant: null, ext: null });
    expect(parseMediaPathSegment('12.JPG')).toEqual({ id: 12, variant: null, ext: 'jpg' });
    expect(parseMediaPathSegment('12-small.jpg')).toEqual({ id: 12, variant: 'small', ext: 'jpg' });
    expect(parseMediaPathSegment('12-large')).toEqual({ id: 12, variant: 'large', ext: null });
    for (const bad of ['0', 'x', '12-huge.jpg', '12.', '12..jpg', '-1', '99999999999', '12.j/pg', 'count']) expect(parseMediaPathSegment(bad)).toBeNull();
  });

  it('takes {base_url} from trusted, well-formed forwarded headers only', () => {
    const config = { PUBLIC_BASE_URL: 'http://localhost:3000', TRUST_FORWARDED_HEADERS: true };
    const req = (headers: Record<string, string>) => ({ headers });
    expect(requestBaseUrl(req({ 'x-forwarded-host': 'data.example.org', 'x-forwarded-proto': 'https' }), config)).toBe('https://data.example.org');
    expect(requestBaseUrl(req({ 'x-forwarded-host': 'a.example.org:8443, proxy.internal', 'x-forwarded-proto': 'HTTPS,http' }), config)).toBe('https://a.example.org:8443');
    expect(requestBaseUrl(req({ 'x-forwarded-host': 'data.example.org' }), config)).toBe('https://data.example.org');
    expect(requestBaseUrl(req({ 'x-forwarded-host': 'evil.org/path?x=', 'x-forwarded-proto': 'https' }), config)).toBe('http://localhost:3000');
    expect(requestBaseUrl(req({ 'x-forwarded-host': 'ok.org', 'x-forwarded-proto': 'javascript' }), config)).toBe('http://localhost:3000');
    expect(requestBaseUrl(req({}), config)).toBe('http://localhost:3000');
    expect(requestBaseUrl(req({ 'x-forwarded-host': 'data.example.org' }), { ...config, TRUST_FORWARDED_HEADERS: false })).toBe('http://localhost:3000');
  });
});
