/**
 * Multipart uploads: `init` creates one sparse file of the declared size in a
 * session folder, each part is written in place at its offset, and `complete`
 * renames the file into place, so publishing costs O(1) whatever the size.
 *
 * The session folder lives in the staging folder (`<stateDir>/staging/<id>/`,
 * or `SERVICE_STAGING_DIR/storage/<uid>/<id>/` shared by several instances:
 * the handle holds the rest, so any instance takes the next part), out of
 * the user's folder, whenever a file there can be renamed into the storage
 * (same filesystem: a probe rename decides once per driver). When it cannot
 * (the storage is another disk or a network mount), it stays in the hidden
 * `<root>/.service-staging/<id>/`: a copy at finalize would cost O(size)
 * (measured in docs/files-api.md) and leave the client waiting on it. Each
 * handle records where its session lives, so sessions opened before an
 * upgrade (always in the root) finish where they started.
 */
import { promises as fsp } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { AppError } from '../../../errors';
import { randomToken, safeEqual } from '../../../lib/crypto';
import { STAGING_DIR, TEMP_PREFIX, cleanRel } from '../../../lib/paths';
import type { Entry, MultipartCapability } from '../../types';
import { fsError, mapFs } from './local.errors';
import type { LocalRoot } from './local.root';
import { fileSink } from './local.sink';

/** Where a session's folder is: the data dir, or the storage's hidden staging folder. */
type Place = 'data' | 'root';

interface Session {
  id: string;
  path: string;
  size: number;
  partSize: number;
  place: Place;
}

const DATA = 'data';
const ID_RE = /^[A-Za-z0-9_-]{8,64}$/;

export class LocalMultipart implements MultipartCapability {
  readonly presigned = false;

  private placeOnce: Promise<Place> | null = null;

  /** `stagingBase`: a folder in the data dir for session folders (null: always the root's hidden folder). */
  constructor(
    private readonly root: LocalRoot,
    private readonly stagingBase: string | null,
  ) {}

  /** Creates the sparse staged file; the target's folder must exist (`not_found`). Nothing appears at `path` yet. */
  async init(path: string, opts: { size: number; partSize: number; mime?: string }): Promise<{ handle: string }> {
    const rel = cleanRel(path, { allowReserved: true });
    if (!Number.isSafeInteger(opts.size) || opts.size < 0) throw new AppError('validation_failed', { field: 'size' }, { field: 'size' });
    if (!Number.isSafeInteger(opts.partSize) || opts.partSize < 1) throw new AppError('validation_failed', { field: 'part_size' }, { field: 'part_size' });
    await this.targetFolder(rel);
    const session: Session = { id: randomToken(18), path: rel, size: opts.size, partSize: opts.partSize, place: await this.place() };
    const dir = this.dirOf(session);
    await mapFs(rel, async () => {
      await fsp.mkdir(join(dir, 'parts'), { recursive: true, mode: 0o755 });
      const fh = await fsp.open(join(dir, DATA), 'wx', 0o644);
      try {
        await fh.truncate(session.size);
      } finally {
        await fh.close();
      }
    });
    return { handle: JSON.stringify(session) };
  }

  /**
   * Writes part `part` (1-based) at offset (part-1)*partSize with positional
   * writes. Idempotent: a re-sent part overwrites the same bytes and gets a
   * new etag. The body must be exactly the part's length (`bad_body`).
   */
  async putPart(handle: string, part: number, body: Readable, size: number, signal?: AbortSignal): Promise<{ etag: string }> {
    const s = parseHandle(handle);
    const count = partCount(s);
    if (!Number.isInteger(part) || part < 1 || part > count) throw new AppError('validation_failed', { field: 'part' }, { field: 'part' });
    const offset = (part - 1) * s.partSize;
    const expected = Math.min(s.partSize, s.size - offset);
    if (size !== expected) throw new AppError('bad_body', { reason: `part ${part} must be ${expected} bytes` });
    const dir = await this.sessionDir(s);
    const fh = await mapFs(s.path, () => fsp.open(join(dir, DATA), 'r+'));
    let written = 0;
    try {
      const counter = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          written += chunk.length;
          if (written > expected) cb(new AppError('bad_body', { reason: `part ${part} is longer than ${expected} bytes` }));
          else cb(null, chunk);
        },
      });
      await pipeline(body, counter, fileSink(fh, offset), { signal });
      // Flush each part as it lands, so finalize has (almost) nothing left to sync and stays O(1).
      await fh.datasync();
    } catch (e) {
      throw fsError(e, s.path);
    } finally {
      await fh.close();
    }
    if (written !== expected) throw new AppError('bad_body', { reason: `part ${part} was ${written} of ${expected} bytes` });
    // Unique per put, never a content hash: a finalize naming a superseded put is refused.
    const etag = `${part}-${randomToken(12)}`;
    const tmp = join(dir, 'parts', TEMP_PREFIX + randomToken(6));
    await fsp.writeFile(tmp, etag);
    await fsp.rename(tmp, join(dir, 'parts', String(part)));
    return { etag };
  }

  /**
   * Checks that every part is listed once, in order, with the etag its last
   * put returned (`conflict` otherwise), fsyncs and renames the staged file to
   * the target (replacing it), and removes the session.
   */
  async complete(handle: string, parts: Array<{ part: number; etag: string }>): Promise<Entry> {
    const s = parseHandle(handle);
    const dir = await this.sessionDir(s);
    const count = partCount(s);
    if (parts.length !== count) throw new AppError('conflict', { reason: `expected ${count} parts, got ${parts.length}` });
    for (let i = 0; i < count; i++) {
      const p = parts[i];
      const stored = await fsp.readFile(join(dir, 'parts', String(i + 1)), 'utf8').catch(() => null);
      if (p.part !== i + 1 || stored === null || !safeEqual(stored, String(p.etag)))
        throw new AppError('conflict', { reason: `part ${i + 1} is missing or its etag does not match` });
    }
    const data = join(dir, DATA);
    const st = await mapFs(s.path, () => fsp.stat(data));
    if (st.size !== s.size) throw new AppError('conflict', { reason: `staged size ${st.size} differs from declared ${s.size}` });
    const fh = await mapFs(s.path, () => fsp.open(data, 'r+'));
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    const target = await this.targetFolder(s.path);
    await mapFs(s.path, () => fsp.rename(data, target));
    const folder = await fsp.open(dirname(target), 'r');
    await folder.sync().finally(() => folder.close());
    await fsp.rm(dir, { recursive: true, force: true });
    return { name: s.path.slice(s.path.lastIndexOf('/') + 1), type: 'file', size: s.size, mtime: Math.floor(st.mtimeMs) };
  }

  /** Discards the staged data. Idempotent. */
  async abort(handle: string): Promise<void> {
    const s = parseHandle(handle);
    await fsp.rm(this.dirOf(s), { recursive: true, force: true });
  }

  private dirOf(s: Pick<Session, 'id' | 'place'>): string {
    return this.inRoot(s) ? join(this.root.real, STAGING_DIR, s.id) : join(this.stagingBase!, s.id);
  }

  /** True when the session's folder is in the root's hidden staging folder (on the storage's own disk). */
  private inRoot(s: Pick<Session, 'place'>): boolean {
    return !(s.place === 'data' && this.stagingBase);
  }

  /** Where new sessions go: decided once, by renaming a probe file from the data dir into the root. */
  private place(): Promise<Place> {
    this.placeOnce ??= this.probe();
    return this.placeOnce;
  }

  private async probe(): Promise<Place> {
    if (!this.stagingBase) return 'root';
    const name = `${TEMP_PREFIX}probe-${randomToken(6)}`;
    const from = join(this.stagingBase, name);
    const to = join(this.root.real, name);
    try {
      await fsp.mkdir(this.stagingBase, { recursive: true, mode: 0o700 });
      await fsp.writeFile(from, '');
      await fsp.rename(from, to);
      await fsp.rm(to, { force: true });
      return 'data';
    } catch {
      // EXDEV (another filesystem or mount), or the data dir is unusable: stage beside the files.
      await fsp.rm(from, { force: true }).catch(() => undefined);
      return 'root';
    }
  }

  /**
   * The session's folder; a finished, aborted or unknown session → `not_found`. A session kept in the
   * root's staging folder whose staging folder is gone went away with its disk (the root unmounted, renamed
   * or unplugged): `storage_unavailable`, since the session resumes when the disk is back.
   */
  private async sessionDir(s: Session): Promise<string> {
    const dir = this.dirOf(s);
    const ok = await fsp.stat(join(dir, DATA)).then(
      () => true,
      () => false,
    );
    if (ok) return dir;
    if (
      this.inRoot(s) &&
      !(await fsp.stat(dirname(dir)).then(
        () => true,
        () => false,
      ))
    )
      throw this.root.gone();
    throw new AppError('not_found', { path: s.path, reason: 'no such upload session' });
  }

  /** Resolved target path whose folder exists; `not_found` when it does not. */
  private async targetFolder(rel: string): Promise<string> {
    const target = await this.root.resolve(rel);
    const parent = await mapFs(rel, () => fsp.stat(dirname(target)));
    if (!parent.isDirectory()) throw new AppError('not_found', { path: rel });
    return target;
  }
}

const partCount = (s: Session): number => Math.max(1, Math.ceil(s.size / s.partSize));

/** Parses and checks a handle: it comes back from the database, so it is validated like input. */
function parseHandle(handle: string): Session {
  let v: unknown;
  try {
    v = JSON.parse(handle);
  } catch {
    throw new AppError('bad_id', { reason: 'malformed upload handle' });
  }
  const s = v as Session;
  if (
    !s ||
    typeof s !== 'object' ||
    typeof s.id !== 'string' ||
    !ID_RE.test(s.id) ||
    typeof s.path !== 'string' ||
    !Number.isSafeInteger(s.size) ||
    s.size < 0 ||
    !Number.isSafeInteger(s.partSize) ||
    s.partSize < 1
  )
    throw new AppError('bad_id', { reason: 'malformed upload handle' });
  // Handles written before sessions could live in the data dir have no place: theirs is the root.
  return { id: s.id, path: cleanRel(s.path, { allowReserved: true }), size: s.size, partSize: s.partSize, place: s.place === 'data' ? 'data' : 'root' };
}
