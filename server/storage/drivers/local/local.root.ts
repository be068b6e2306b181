/**
 * The local driver's root folder and the containment rule: every relative
 * path is mapped under the root and checked on its REAL path (the realpath of
 * the nearest existing ancestor must lie inside realpath(root)), so a symlink
 * inside the root that points outside leads nowhere.
 */
import { promises as fsp } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { AppError } from '../../../errors';
import { cleanRel } from '../../../lib/paths';
import { fsError } from './local.errors';

/** Why `path` cannot be a local storage root, or null when it can. */
export function rootPathIssue(path: unknown): string | null {
  if (typeof path !== 'string' || path.trim() === '') return 'a folder path is required';
  if (!isAbsolute(path)) return 'the folder path must be absolute';
  if (path.split(/[\\/]+/).includes('..')) return 'the folder path must not contain ".."';
  if (normalize(path) === sep) return 'the filesystem root cannot be a storage';
  return null;
}

export class LocalRoot {
  private constructor(
    /** The configured absolute path. */
    readonly path: string,
    /** Its real path, resolved once at open; every containment check compares against it. */
    readonly real: string,
  ) {}

  /**
   * Opens (creating with mode 0755 when missing) the root folder. Refuses a
   * relative path, `..`, and any path whose real location is `/`.
   */
  static async open(path: string): Promise<LocalRoot> {
    const issue = rootPathIssue(path);
    if (issue) throw new AppError('validation_failed', { field: 'path', reason: issue }, { field: 'path', reason: issue });
    const abs = normalize(path).replace(/[\\/]+$/, '');
    const existed = await fsp.stat(abs).then(
      (s) => {
        if (!s.isDirectory()) throw new AppError('validation_failed', { field: 'path', reason: 'not a folder' }, { field: 'path', reason: 'not a folder' });
        return true;
      },
      () => false,
    );
    if (!existed) {
      await fsp.mkdir(abs, { recursive: true, mode: 0o755 }).catch((e) => {
        throw fsError(e, '');
      });
      // mkdir's mode is filtered by the umask; the spec promises 0755.
      await fsp.chmod(abs, 0o755);
    }
    const real = await fsp.realpath(abs);
    if (real === sep) throw new AppError('validation_failed', { field: 'path', reason: 'the filesystem root cannot be a storage' }, { field: 'path' });
    return new LocalRoot(abs, real);
  }

  /** True when the absolute real path `real` is the root or lies below it. */
  contains(real: string): boolean {
    return real === this.real || real.startsWith(this.real + sep);
  }

  /**
   * Absolute path of `rel` with every symlink followed, after the containment
   * check. A missing tail is appended to the real path of the nearest existing
   * ancestor. Throws `permission_denied` when the path leads outside the root
   * or through a dangling symlink, `storage_unavailable` when the root is gone.
   */
  async resolve(rel: string): Promise<string> {
    const clean = cleanRel(rel, { allowReserved: true });
    const tail: string[] = [];
    let cur = clean === '' ? this.real : join(this.real, clean);
    for (;;) {
      try {
        const real = await fsp.realpath(cur);
        if (!this.contains(real)) throw outside(clean);
        return tail.length ? join(real, ...tail.reverse()) : real;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw fsError(e, clean);
        if (cur === this.real) throw this.gone();
        if (await isSymlink(cur)) throw new AppError('permission_denied', { path: clean, reason: 'dangling symlink' });
        tail.push(basename(cur));
        cur = dirname(cur);
      }
    }
  }

  /**
   * Absolute path of the entry `rel` itself (its parent resolved, its last
   * segment not followed), for verbs that act on a link rather than its
   * target (delete, move). A symlink whose target lies outside is refused.
   */
  async resolveEntry(rel: string): Promise<string> {
    const clean = cleanRel(rel, { allowReserved: true });
    if (clean === '') return this.resolve('');
    const slash = clean.lastIndexOf('/');
    const parent = await this.resolve(slash < 0 ? '' : clean.slice(0, slash));
    const abs = join(parent, clean.slice(slash + 1));
    if (await isSymlink(abs)) {
      const target = await fsp.realpath(abs).catch(() => null);
      if (target === null || !this.contains(target)) throw outside(clean);
    }
    return abs;
  }

  /** The error for a root folder that vanished (deleted or unmounted while in use). */
  gone(): AppError {
    return new AppError('storage_unavailable', { reason: `the storage folder ${this.path} is missing` });
  }
}

const outside = (rel: string) => new AppError('permission_denied', { path: rel, reason: 'symlink leads outside the storage' });

const isSymlink = (abs: string): Promise<boolean> =>
  fsp.lstat(abs).then(
    (s) => s.isSymbolicLink(),
    () => false,
  );
