// Where the benches keep attachment files (MEDIA_ROOT, UPLOAD_TMP_DIR). docs/benchmarks.md,
// "The media folder": on an ext4 *without* a journal (this
// VM's root, so os.tmpdir()) creating a file right after bulk deletes costs ~700 µs instead of
// ~30 µs (find_inode_bit skips recently deleted inodes), and every bench deletes a PostgreSQL
// cluster and a media folder when it exits. Production volumes are journalled, so the benches
// put their media on a journalled file system when they can, and say where.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/**
 * Which way the media parent is had: BENCH_MEDIA_DIR when set (the escape hatch); as root on
 * Linux a loop-mounted ext4 image with a journal; otherwise os.tmpdir(), as before.
 */
export function mediaPlan({ env = process.env, uid = process.getuid?.(), platform = process.platform } = {}) {
  if (env.BENCH_MEDIA_DIR) return { kind: 'env', dir: env.BENCH_MEDIA_DIR };
  if (platform === 'linux' && uid === 0) return { kind: 'loop' };
  return { kind: 'tmpdir', dir: tmpdir() };
}

/** `<type>[, with journal | no journal]` of the file system holding `dir` (findmnt; ext4's journal shows as /proc/fs/jbd2/<dev>-<n>). */
export function describeFileSystem(dir) {
  try {
    const [source, type] = execFileSync('findmnt', ['-n', '-o', 'SOURCE,FSTYPE', '--target', dir], { encoding: 'utf8' }).trim().split(/\s+/);
    if (type !== 'ext4') return type;
    const journalled = readdirSync('/proc/fs/jbd2').some((name) => name.startsWith(`${basename(source)}-`));
    return `ext4, ${journalled ? 'with journal' : 'no journal'}`;
  } catch {
    return 'file system unknown';
  }
}

let parent;

/**
 * The folder under which a bench makes its media folders, the same for the whole process, and
 * prints once which file system it is on, so every figure says where it was measured.
 */
export function mediaParent() {
  if (parent) return parent;
  const plan = mediaPlan();
  let how = plan.kind === 'env' ? 'BENCH_MEDIA_DIR' : 'os.tmpdir()';
  parent = plan.dir;
  if (plan.kind === 'loop') {
    try {
      parent = mountJournalledImage();
      how = 'loop image';
    } catch (err) {
      parent = tmpdir();
      how = `os.tmpdir(); the loop image failed: ${String(err.message).split('\n')[0]}`;
    }
  }
  console.log(`media root: ${parent} (${describeFileSystem(parent)}; ${how})`);
  return parent;
}

/**
 * A sparse 16 GiB ext4 image with a journal (mkfs.ext4's default), loop-mounted on a temporary
 * folder; unmounted and deleted when the process exits, also after a failure or a signal.
 * noinit_itable: the image is sparse, its inode tables already read as zeros, so the kernel's
 * background zeroing would only add writes beside the measure.
 */
function mountJournalledImage() {
  const mountPoint = mkdtempSync(join(tmpdir(), 'bench-mediafs-'));
  const image = `${mountPoint}.img`;
  let mounted = false;
  const cleanup = () => {
    if (mounted) {
      mounted = false;
      // Lazy as a last resort: a service still running after a failure keeps the mount busy.
      try { execFileSync('umount', [mountPoint], { stdio: 'ignore' }); } catch { try { execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' }); } catch { /* reported by `mount` */ } }
    }
    rmSync(image, { force: true });
    try { rmdirSync(mountPoint); } catch { /* still mounted: left for `mount` to show */ }
  };
  try {
    // encrypted-intake writes up to about 750 MB a round (a server-mode request writes three files):
    // 4 GiB held about five rounds and the warm-up, and filled up (ENOSPC) in longer runs.
    execFileSync('truncate', ['-s', '16G', image]);
    execFileSync('mkfs.ext4', ['-q', '-F', image], { stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('mount', ['-o', 'loop,noinit_itable', image, mountPoint], { stdio: ['ignore', 'ignore', 'pipe'] });
    mounted = true;
  } catch (err) {
    cleanup();
    throw err;
  }
  process.once('exit', cleanup);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      cleanup();
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    });
  }
  return mountPoint;
}
