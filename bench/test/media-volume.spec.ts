import { tmpdir } from 'node:os';
import { describeFileSystem, mediaPlan } from '../media-volume.mjs';

describe('where the benches keep media (bench/media-volume.mjs)', () => {
  it('honours BENCH_MEDIA_DIR, also as root', () => {
    expect(mediaPlan({ env: { BENCH_MEDIA_DIR: '/mnt/media' }, uid: 0, platform: 'linux' })).toEqual({ kind: 'env', dir: '/mnt/media' });
    expect(mediaPlan({ env: { BENCH_MEDIA_DIR: '/mnt/media' }, uid: 1000, platform: 'linux' })).toEqual({ kind: 'env', dir: '/mnt/media' });
  });

  it('tries a loop-mounted journalled image only as root on Linux', () => {
    expect(mediaPlan({ env: {}, uid: 0, platform: 'linux' })).toEqual({ kind: 'loop' });
    expect(mediaPlan({ env: { BENCH_MEDIA_DIR: '' }, uid: 0, platform: 'linux' })).toEqual({ kind: 'loop' });
  });

  it('falls back to os.tmpdir() when not root or not Linux', () => {
    expect(mediaPlan({ env: {}, uid: 1000, platform: 'linux' })).toEqual({ kind: 'tmpdir', dir: tmpdir() });
    expect(mediaPlan({ env: {}, uid: undefined, platform: 'win32' })).toEqual({ kind: 'tmpdir', dir: tmpdir() });
  });

  it('names the file system of a folder without needing root', () => {
    expect(typeof describeFileSystem(tmpdir())).toBe('string');
    expect(describeFileSystem('/no/such/folder/at/all')).toBe('file system unknown');
  });
});
