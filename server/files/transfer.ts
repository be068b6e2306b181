/**
 * Copy and move as a user-visible op: a folder, a large file, or anything
 * crossing storages. Within one storage the driver's own copy/move is used
 * where it has one; otherwise bytes stream from one driver to the other with
 * backpressure, progress in bytes and cancel between and inside files. Every
 * item written ends in the write gate.
 */
import type { Catalogue, WriteContext } from '../catalogue';
import type { Actor, RequestMeta } from '../events';
import type { JobContext } from '../jobs';
import { AppError } from '../errors';
import { joinRel } from '../lib/paths';
import type { Entry, StorageDriver } from '../storage';

export const TRANSFER_JOB = 'files.transfer';

export interface TransferPayload {
  op: 'copy' | 'move';
  src: { storage_id: number; rel: string };
  dst: { storage_id: number; rel: string };
  overwrite: boolean;
  actor: Actor | null;
  request?: RequestMeta;
}

interface Item {
  rel: string;
  entry: Entry;
}

export class Transfer {
  constructor(private cat: Catalogue) {}

  /** Runs one transfer op to the end; throws the first error (the op fails with it). */
  async run(ctx: JobContext<TransferPayload>): Promise<{ path: string }> {
    const t = ctx.payload;
    const src = await this.cat.driverFor(t.src.storage_id);
    const dst = await this.cat.driverFor(t.dst.storage_id);
    const audit = t.op === 'move' ? 'file.move' : 'file.copy';
    const base: WriteContext = { actor: t.actor, request: t.request, origin: t.op };
    const same = t.src.storage_id === t.dst.storage_id;
    if (same && t.op === 'move' && src.move) {
      await src.move(t.src.rel, t.dst.rel, { overwrite: t.overwrite });
      await this.cat.gate.moved(t.dst.storage_id, t.src.rel, t.dst.rel, await dst.stat(t.dst.rel), { ...base, audit });
      ctx.progress(1);
      return { path: t.dst.rel };
    }
    if (!t.overwrite && (await exists(dst, t.dst.rel))) throw new AppError('conflict', { path: t.dst.rel });
    if (same && src.copy) {
      await src.copy(t.src.rel, t.dst.rel, { overwrite: t.overwrite, signal: ctx.signal });
      await this.catalogueTree(dst, t.dst.storage_id, t.dst.rel, base);
    } else {
      await this.stream(ctx, src, dst, t);
    }
    const top = await dst.stat(t.dst.rel);
    await this.cat.gate.written(t.dst.storage_id, t.dst.rel, top, { ...base, audit, meta: { from: t.src.rel } });
    if (t.op === 'move') {
      await src.delete(t.src.rel);
      await this.cat.gate.removed(t.src.storage_id, t.src.rel, { actor: t.actor, request: t.request, origin: 'move' });
    }
    ctx.progress(1);
    return { path: t.dst.rel };
  }

  /** Streams every item below the source to the target, folders first, counting bytes. */
  private async stream(ctx: JobContext<TransferPayload>, src: StorageDriver, dst: StorageDriver, t: TransferPayload): Promise<void> {
    const items = await tree(src, t.src.rel);
    const total = items.reduce((n, i) => n + (i.entry.type === 'file' ? i.entry.size : 0), 0);
    let done = 0;
    for (const item of items) {
      ctx.signal.throwIfAborted();
      const rel = item.rel === '' ? t.dst.rel : joinRel(t.dst.rel, item.rel);
      const from = item.rel === '' ? t.src.rel : joinRel(t.src.rel, item.rel);
      let written: Entry;
      if (item.entry.type === 'dir') {
        await dst.mkdir(rel);
        written = await dst.stat(rel);
      } else {
        const body = await src.read(from, undefined, ctx.signal);
        written = await dst.write(rel, body, { size: item.entry.size, mime: item.entry.mime, overwrite: true, signal: ctx.signal });
        done += item.entry.size;
        ctx.progress(total ? done / total : 1, { done, total });
      }
      if (item.rel !== '') await this.cat.gate.written(t.dst.storage_id, rel, written, { actor: t.actor, origin: t.op });
    }
  }

  /** Gives every item below a server-side copy its catalogue row (the top one is gated by the caller). */
  private async catalogueTree(d: StorageDriver, storageId: number, rel: string, ctx: WriteContext): Promise<void> {
    for (const item of await tree(d, rel)) if (item.rel !== '') await this.cat.gate.written(storageId, joinRel(rel, item.rel), item.entry, ctx);
  }
}

/** Whether `rel` exists on the backend (any error but `not_found` propagates). */
export async function exists(d: StorageDriver, rel: string): Promise<boolean> {
  try {
    await d.stat(rel);
    return true;
  } catch (e) {
    if (e instanceof AppError && e.code === 'not_found') return false;
    throw e;
  }
}

/** The item at `rel` and everything below it, parents before children; paths relative to `rel`. */
export async function tree(d: StorageDriver, rel: string): Promise<Item[]> {
  const top = await d.stat(rel);
  const out: Item[] = [{ rel: '', entry: top }];
  if (top.type !== 'dir') return out;
  if (d.walk) {
    const found: Item[] = [];
    for await (const w of d.walk(rel)) found.push({ rel: w.path, entry: w });
    found.sort((a, b) => a.rel.split('/').length - b.rel.split('/').length);
    return out.concat(found);
  }
  for (let i = 0; i < out.length; i++) {
    if (out[i].entry.type !== 'dir') continue;
    const at = out[i].rel;
    for await (const e of d.list(at === '' ? rel : joinRel(rel, at))) out.push({ rel: at === '' ? e.name : joinRel(at, e.name), entry: e });
  }
  return out;
}
