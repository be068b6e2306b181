/**
 * The SMB storage driver over smbclient. Paths reach it clean (lib/paths);
 * here they are also checked against what SMB and smbclient can carry, joined
 * to the configured `root`, and quoted into commands.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { AppError } from '../../../errors';
import { TEMP_PREFIX, baseName, joinRel, parentRel } from '../../../lib/paths';
import type { ByteRange, Entry, StorageDriver, WalkEntry, WriteOptions } from '../../types';
import type { SmbClient } from './client';
import { parseListing, parseRecursive } from './listing';
import { checkSmbPath, quote } from './names';

const WRITE_TIME = /^write_time:\s+\w{3} (.+) UTC$/m;

/** In-flight upload temp files (or ones a dropped connection kept us from removing) are never listed. */
const isTemp = (name: string): boolean => name.startsWith(TEMP_PREFIX);

export class SmbDriver implements StorageDriver {
  constructor(
    private readonly client: SmbClient,
    /** Share-relative folder every path is resolved under ('' = the whole share). */
    private readonly root: string,
  ) {}

  /** Metadata of one path; '' is the root folder. Missing → `not_found`. */
  async stat(path: string): Promise<Entry> {
    const full = this.full(path);
    if (full === '') {
      const out = await this.client.run('allinfo ""', { path });
      const t = WRITE_TIME.exec(out);
      return { name: '', type: 'dir', size: 0, mtime: t ? Date.parse(`${t[1]} UTC`) : 0 };
    }
    const rows = parseListing(await this.client.run(`ls ${quote(full)}`, { path }));
    const e = rows.find((r) => r.name === baseName(full));
    if (!e) throw new AppError('not_found', { path });
    return path === '' ? { ...e, name: '' } : e;
  }

  /** Children of a folder. Missing folder or a file → `not_found`. */
  async *list(dir: string): AsyncIterable<Entry> {
    const full = this.full(dir);
    const rows = parseListing(await this.client.run(`ls ${quote(full === '' ? '*' : `${full}/*`)}`, { path: dir }));
    yield* rows.filter((e) => !isTemp(e.name));
  }

  /**
   * The file's bytes, or `range` of them. smbclient has no ranged get: a range
   * costs a read of the file up to its end byte (the skipped part is discarded).
   */
  async read(path: string, range?: ByteRange, signal?: AbortSignal): Promise<Readable> {
    const full = this.full(path);
    if (full === '') throw new AppError('not_found', { path });
    const skip = range?.start ?? 0;
    const limit = range?.end === undefined ? undefined : range.end - skip + 1;
    return this.client.get(path, quote(full), { skip, limit, signal });
  }

  /**
   * Uploads to a hidden temp name beside the target, then renames it into
   * place (`rename -f` replaces atomically on the server). A failed upload
   * removes the temp file; the target is untouched.
   */
  async write(path: string, body: Readable, opts: WriteOptions = {}): Promise<Entry> {
    const full = this.full(path);
    if (full === '') throw new AppError('conflict', { path });
    const overwrite = opts.overwrite ?? true;
    if (!overwrite && (await this.exists(path))) throw new AppError('conflict', { path });
    const temp = joinRel(parentRel(full), `${TEMP_PREFIX}${randomBytes(6).toString('hex')}.part`);
    let bytes: number;
    try {
      bytes = await this.client.put(path, quote(temp), body, opts.signal);
      const staged = parseListing(await this.client.run(`ls ${quote(temp)}`, { path }));
      if (staged[0]?.size !== bytes) throw new AppError('storage_unreachable', { reason: 'smb upload incomplete' });
      await this.client.run(`rename ${quote(temp)} ${quote(full)}${overwrite ? ' -f' : ''}`, { path });
    } catch (e) {
      await this.client.run(`del ${quote(temp)}`).catch(() => undefined);
      throw e;
    }
    return this.stat(path);
  }

  /** Creates the folder and its missing parents. Idempotent; a file in the way → `conflict`. */
  async mkdir(path: string): Promise<void> {
    const full = this.full(path);
    if (full === '') return;
    await this.client.run(`recurse; mkdir ${quote(full)}`, { path });
    const e = await this.stat(path);
    if (e.type !== 'dir') throw new AppError('conflict', { path });
  }

  /** Deletes a file or a folder tree. Missing → `not_found`. */
  async delete(path: string): Promise<void> {
    const full = this.full(path);
    if (full === '') throw new AppError('permission_denied', { path });
    await this.client.run(`deltree ${quote(full)}`, { path });
  }

  /** Idempotent: the auth file is removed; nothing else outlives a call. */
  async close(): Promise<void> {
    this.client.close();
  }

  /** Flat listing of everything below `prefix`, paths relative to `prefix`, in one smbclient process. */
  async *walk(prefix: string, signal?: AbortSignal): AsyncIterable<WalkEntry> {
    const full = this.full(prefix);
    const out = await this.client.run(`recurse; ls ${quote(full === '' ? '*' : `${full}/*`)}`, { path: prefix, signal });
    const strip = full === '' ? 0 : full.length + 1;
    for (const { dir, entry } of parseRecursive(out)) {
      if (isTemp(entry.name)) continue;
      const rel = dir === '' ? full : dir;
      // The first block (the prefix itself) has no header line.
      const under = rel === full ? '' : rel.slice(strip);
      yield { ...entry, path: joinRel(under, entry.name) };
    }
  }

  /** Server-side rename of a file or folder. Target exists and !overwrite → `conflict`. */
  async move(from: string, to: string, opts: { overwrite: boolean }): Promise<void> {
    const src = this.full(from);
    const dst = this.full(to);
    if (src === '' || dst === '') throw new AppError('permission_denied', { path: src === '' ? from : to });
    if (opts.overwrite) {
      await this.stat(from);
      // SMB renames cannot replace a folder: clear the way first.
      const target = await this.stat(to).catch(() => null);
      if (target?.type === 'dir') await this.delete(to);
    }
    await this.client.run(`rename ${quote(src)} ${quote(dst)}${opts.overwrite ? ' -f' : ''}`, { path: from });
  }

  private async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (e) {
      if (e instanceof AppError && e.code === 'not_found') return false;
      throw e;
    }
  }

  private full(path: string): string {
    checkSmbPath(path);
    return joinRel(this.root, path).replace(/\/$/, '');
  }
}
