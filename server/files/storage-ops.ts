/**
 * Storage operations addressed by place, with no access decision: the file
 * service's own plumbing, and the face the trusted modules (trash, versions,
 * antivirus, thumbnails) reach through `files/internal.ts`. Byte-moving calls
 * announce nothing by themselves; the `written`/`removed`/`moved` calls are
 * the write gate's announcements, made once the bytes are in place.
 */
import { createHash } from 'node:crypto';
import { close } from 'node:fs';
import type { Readable } from 'node:stream';
import type { CatalogueIo, GateNode, WriteContext } from '../catalogue/io';
import { AppError, isAppError } from '../errors';
import { joinRel, parentRel } from '../lib/paths';
import type { ByteRange, Entry, PresignOptions, StorageDriver, WriteOptions } from '../storage';
import type { Place } from './access';

/** An item of a tree walk: `rel` relative to the walked place ('' is the place itself). */
export interface TreeItem {
  rel: string;
  entry: Entry;
}

export class StorageOps {
  constructor(private io: CatalogueIo) {}

  /** Metadata of a place. Missing → `not_found`. */
  async stat(p: Place): Promise<Entry> {
    return (await this.driver(p)).stat(p.rel);
  }

  /** Metadata of a place, or null when it does not exist (other errors propagate). */
  async statOrNull(p: Place): Promise<Entry | null> {
    try {
      return await this.stat(p);
    } catch (e) {
      if (isAppError(e) && e.code === 'not_found') return null;
      throw e;
    }
  }

  /** Children of a folder, any order. */
  async *list(p: Place): AsyncIterable<Entry> {
    yield* (await this.driver(p)).list(p.rel);
  }

  /** The item at `p` and everything below it, parents before children. */
  async tree(p: Place, signal?: AbortSignal): Promise<TreeItem[]> {
    const d = await this.driver(p);
    const top = await d.stat(p.rel);
    const out: TreeItem[] = [{ rel: '', entry: top }];
    if (top.type !== 'dir') return out;
    if (d.walk) {
      const found: TreeItem[] = [];
      for await (const w of d.walk(p.rel, signal)) if (w.path !== '') found.push({ rel: w.path, entry: w });
      found.sort((a, b) => a.rel.split('/').length - b.rel.split('/').length);
      return out.concat(found);
    }
    for (let i = 0; i < out.length; i++) {
      if (out[i].entry.type !== 'dir') continue;
      signal?.throwIfAborted();
      const at = out[i].rel;
      for await (const e of d.list(at === '' ? p.rel : joinRel(p.rel, at))) out.push({ rel: at === '' ? e.name : joinRel(at, e.name), entry: e });
    }
    return out;
  }

  /** The bytes of a file, or of `range`. Missing → `not_found`. */
  async read(p: Place, range?: ByteRange, signal?: AbortSignal): Promise<Readable> {
    return (await this.driver(p)).read(p.rel, range, signal);
  }

  /**
   * The local fast path: the contained real path of a file on a local disk
   * (sendfile-style serving, thumbnail tools, scanners), or null elsewhere.
   */
  async localFile(p: Place): Promise<string | null> {
    const d = await this.driver(p);
    return d.localPath ? d.localPath(p.rel) : null;
  }

  /**
   * Metadata and, on a local disk, the contained real path from one
   * containment check (a download's stat and send); `local` is null elsewhere.
   * With `open`, `take()` hands over, once, the file already opened by that
   * check (the taker closes it), or its bytes when the driver kept them in
   * memory, or null; a descriptor nobody took by the next turn of the event
   * loop is closed (a range it could not serve, an error). Missing → `not_found`.
   */
  async statForServing(p: Place, open = false): Promise<{ entry: Entry; local: string | null; take(): number | Buffer | null }> {
    const d = await this.driver(p);
    if (!d.statLocal) return { entry: await d.stat(p.rel), local: null, take: () => null };
    const { entry, path, fd, bytes } = await d.statLocal(p.rel, { open });
    if (bytes) return { entry, local: path, take: () => bytes };
    let held = fd ?? null;
    if (held !== null) setImmediate(() => held !== null && close(held, () => undefined));
    const take = () => {
      const n = held;
      held = null;
      return n;
    };
    return { entry, local: path, take };
  }

  /** A time-limited URL a client can GET straight from the backend, or null when it has none. */
  async presignGet(p: Place, o: PresignOptions): Promise<string | null> {
    const d = await this.driver(p);
    return d.presignGet ? d.presignGet(p.rel, o) : null;
  }

  /** Atomic write (see the driver contract); announces nothing. */
  async write(p: Place, body: Readable, o: WriteOptions = {}): Promise<Entry> {
    return (await this.driver(p)).write(p.rel, body, o);
  }

  /** Creates a folder and missing parents; idempotent. */
  async mkdir(p: Place): Promise<void> {
    await (await this.driver(p)).mkdir(p.rel);
  }

  /** Deletes a file or a folder with its content. Missing → `not_found`. */
  async delete(p: Place): Promise<void> {
    await (await this.driver(p)).delete(p.rel);
  }

  /** Whether the storage can move in place (trash, rename); `unsupported` otherwise from `move`. */
  async canMove(storageId: number): Promise<boolean> {
    return !!(await this.io.drivers.driverFor(storageId)).move;
  }

  /** Server-side move within one storage. Target exists and !overwrite → `conflict`; no move → `unsupported`. */
  async move(from: Place, toRel: string, o: { overwrite: boolean }): Promise<void> {
    const d = await this.driver(from);
    if (!d.move) throw new AppError('unsupported', { reason: 'this storage cannot move or rename' });
    await d.move(from.rel, toRel, o);
  }

  /** Whether the storage copies on the server side (a copy then costs no transfer). */
  async canCopy(storageId: number): Promise<boolean> {
    return !!(await this.io.drivers.driverFor(storageId)).copy;
  }

  /** Server-side copy of a file or a folder within one storage; `unsupported` when the backend has none. */
  async copy(from: Place, toRel: string, o: { overwrite: boolean; signal?: AbortSignal }): Promise<void> {
    const d = await this.driver(from);
    if (!d.copy) throw new AppError('unsupported', { reason: 'this storage cannot copy on the server' });
    await d.copy(from.rel, toRel, o);
  }

  /** Copies one file within its storage: server-side where the backend can, else streamed into an atomic write. */
  async copyFile(from: Place, toRel: string, o: { size: number; overwrite: boolean; mime?: string; signal?: AbortSignal }): Promise<void> {
    const d = await this.driver(from);
    if (d.copy) {
      try {
        return await d.copy(from.rel, toRel, { overwrite: o.overwrite, signal: o.signal });
      } catch (e) {
        if (!(isAppError(e) && e.code === 'unsupported')) throw e;
      }
    }
    await d.write(toRel, await d.read(from.rel, undefined, o.signal), { size: o.size, mime: o.mime, overwrite: o.overwrite, signal: o.signal });
  }

  /** Hex sha256 of a file's bytes, streamed. */
  async sha256(p: Place, signal?: AbortSignal): Promise<string> {
    const h = createHash('sha256');
    for await (const chunk of await this.read(p, undefined, signal)) h.update(chunk as Buffer);
    return h.digest('hex');
  }

  /** The write gate: `entry` was written at `p` (see catalogue/write-gate). */
  written(p: Place, entry: Entry, ctx: WriteContext): Promise<GateNode> {
    return this.io.gate.written(p.storage_id, p.rel, entry, ctx);
  }

  /** The write gate: the item at `p` is gone for good. */
  removed(p: Place, ctx: Omit<WriteContext, 'origin'> & { origin?: WriteContext['origin'] }): Promise<void> {
    return this.io.gate.removed(p.storage_id, p.rel, ctx);
  }

  /**
   * Server-side move within one storage, then the gate's record of it (node ids follow the item). A folder
   * check of either parent waits until both are done (catalogue/folder-turns.ts). `done`: the bytes were
   * already moved (an op resumed after a crash), only the record is owed.
   */
  async moveRecorded(from: Place, toRel: string, o: { overwrite: boolean; done?: boolean }, ctx: WriteContext): Promise<GateNode> {
    return this.io.turns.run(from.storage_id, [parentRel(from.rel), parentRel(toRel)], async () => {
      if (!o.done) await this.move(from, toRel, o);
      const entry = await this.stat({ storage_id: from.storage_id, rel: toRel });
      return this.io.gate.moved(from.storage_id, from.rel, toRel, entry, ctx);
    });
  }

  /** Driver multipart capability of a storage, or null (uploads stage elsewhere then). */
  async multipart(storageId: number) {
    return (await this.io.drivers.driverFor(storageId)).multipart ?? null;
  }

  private driver(p: Place): Promise<StorageDriver> {
    return this.io.drivers.driverFor(p.storage_id);
  }
}
