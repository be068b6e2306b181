/**
 * Copy and move as a user-visible op: a folder, a large file, or anything
 * crossing storages. Within one storage the backend's own copy/move is used
 * where it has one; otherwise bytes stream from one storage to the other with
 * backpressure, progress in bytes and cancel between and inside files. Every
 * item written ends in the write gate.
 *
 * Resuming after a restart: each file is written, announced, then recorded in
 * the op's journal; a file larger than one part goes to a target that can
 * stage parts in journalled parts and resumes from its last committed part
 * (chunked-copy.ts). A resumed attempt skips what the journal holds, announces
 * (without rewriting) a file the crash left written but unrecorded when its
 * size matches the source, and never repeats the first attempt's "target
 * exists" check against its own partial output. A move records `copied`
 * before it deletes the source, so a crash during the delete finishes it.
 */
import { actorSpec, actorTenant, type Actor, type ActorRestorer, type ActorSpec } from '../auth';
import type { RequestMeta } from '../events';
import type { JobContext, JobQueue } from '../jobs';
import { AppError, isAppError } from '../errors';
import { joinRel } from '../lib/paths';
import type { Place } from './access';
import type { ActorFiles } from './actor-files';
import type { FileService } from './file-service';
import type { TreeItem } from './storage-ops';
import type { Entry } from '../storage';
import { abandonParts, chunkable, copyInParts } from './chunked-copy';

export const TRANSFER_JOB = 'files.transfer';

export interface TransferPayload {
  op: 'copy' | 'move';
  src: Place;
  dst: Place;
  overwrite: boolean;
  actor: ActorSpec;
  request?: RequestMeta;
}

declare module '../jobs/types' {
  interface JobPayloads {
    [TRANSFER_JOB]: TransferPayload;
  }
}

const STARTED = 'started';
const COPIED = 'copied';

export class Transfers {
  constructor(
    private files: FileService,
    private queue: JobQueue,
    private actors: ActorRestorer,
  ) {
    queue.register(TRANSFER_JOB, (ctx) => this.run(ctx), { concurrency: 2, maxAttempts: 1, keepsAwake: true });
  }

  /** Queues a transfer the actor was allowed to start; returns the op id (shown in the actor's ops list). */
  enqueue(actor: Actor, op: 'copy' | 'move', src: Place, dst: Place, overwrite: boolean): Promise<string> {
    const payload: TransferPayload = { op, src, dst, overwrite, actor: actorSpec(actor), request: actor.request };
    const owner = actor.kind === 'system' ? null : actor.principal.id;
    return this.queue.enqueue(TRANSFER_JOB, payload, { tenant: actorTenant(actor), ownerId: owner, visible: true, maxAttempts: 1 });
  }

  /** Runs one transfer op to the end; throws the first error (the op fails with it). */
  async run(ctx: JobContext<TransferPayload>): Promise<{ path: string }> {
    const t = ctx.payload;
    // The actor as they are now: access is checked again, and a disabled account stops the op.
    const fa = this.files.forActor(await this.actors.restore(t.actor, t.request));
    fa.target(t.src, t.op === 'move' ? 'editor' : 'viewer');
    fa.target(t.dst, 'editor');
    // Locks are checked again too (an op holds no lock token): nothing locked moves or is replaced.
    if (t.op === 'move') fa.checkUnlocked(t.src);
    fa.checkUnlocked(t.dst);
    const ops = this.files.ops;
    const audit = t.op === 'move' ? 'file.move' : 'file.copy';
    const same = t.src.storage_id === t.dst.storage_id;
    const resumed = await ctx.journal.has(STARTED);
    if (same && t.op === 'move' && (await ops.canMove(t.src.storage_id))) {
      const done = resumed && !!(await ops.statOrNull(t.dst)) && !(await ops.statOrNull(t.src));
      await ops.moveRecorded(t.src, t.dst.rel, { overwrite: t.overwrite, done }, fa.ctx('move', { audit }));
      ctx.progress(1);
      return { path: t.dst.rel };
    }
    if (!(await ctx.journal.has(COPIED))) {
      if (!resumed) {
        if (!t.overwrite && (await ops.statOrNull(t.dst))) throw new AppError('conflict', { path: t.dst.rel });
        if (t.op === 'copy')
          await this.files.quotaRoom(this.files.catalogue.storageOf(t.src.storage_id), t.src.rel, this.files.catalogue.storageOf(t.dst.storage_id));
        await ctx.journal.put(STARTED);
      }
      if (same && (await ops.canCopy(t.src.storage_id))) await this.serverCopy(ctx, fa, resumed);
      else await this.stream(ctx, fa, resumed);
      await ops.written(t.dst, await ops.stat(t.dst), fa.ctx(t.op, { audit, meta: { from: t.src.rel } }));
      await ctx.journal.put(COPIED);
    }
    if (t.op === 'move') {
      await ops.delete(t.src).catch((e) => {
        if (!(isAppError(e) && e.code === 'not_found')) throw e;
      });
      await ops.removed(t.src, { actor: fa.ctx('move').actor, request: t.request, origin: 'move' });
    }
    ctx.progress(1);
    return { path: t.dst.rel };
  }

  /** A server-side copy (one call), then a catalogue row for every item below the target. */
  private async serverCopy(ctx: JobContext<TransferPayload>, fa: ActorFiles, resumed: boolean): Promise<void> {
    const t = ctx.payload;
    const ops = this.files.ops;
    // The backend copies atomically (a staged folder renamed into place): after a crash the target is either whole or absent.
    if (!(resumed && (await ops.statOrNull(t.dst)))) await ops.copy(t.src, t.dst.rel, { overwrite: t.overwrite, signal: ctx.signal });
    for (const item of await ops.tree(t.dst, ctx.signal)) {
      if (item.rel !== '') await ops.written({ storage_id: t.dst.storage_id, rel: joinRel(t.dst.rel, item.rel) }, item.entry, fa.ctx(t.op));
    }
  }

  /** Streams every item below the source to the target, folders first, counting bytes and skipping committed files. */
  private async stream(ctx: JobContext<TransferPayload>, fa: ActorFiles, resumed: boolean): Promise<void> {
    const t = ctx.payload;
    const ops = this.files.ops;
    const items = await ops.tree(t.src, ctx.signal);
    const total = items.reduce((n, i) => n + (i.entry.type === 'file' ? i.entry.size : 0), 0);
    let done = 0;
    for (const item of items) {
      ctx.signal.throwIfAborted();
      const to: Place = { storage_id: t.dst.storage_id, rel: item.rel === '' ? t.dst.rel : joinRel(t.dst.rel, item.rel) };
      if (item.entry.type === 'dir') {
        await ops.mkdir(to);
        if (item.rel !== '') await ops.written(to, await ops.stat(to), fa.ctx(t.op));
        continue;
      }
      if (!(resumed && (await this.committed(ctx, fa, to, item)))) {
        const from: Place = { storage_id: t.src.storage_id, rel: item.rel === '' ? t.src.rel : joinRel(t.src.rel, item.rel) };
        const report = (bytes: number, resumedAt?: number) =>
          ctx.progress(
            total ? (done + bytes) / total : 1,
            { done: done + bytes, total },
            resumedAt === undefined ? undefined : `resumed ${item.entry.name} at byte ${resumedAt}`,
          );
        // A copied file takes its turn at the tenant's quotas (other writes may have taken room since the op
        // began); a move adds nothing to the tenant once its source is gone.
        const turn = t.op === 'copy' ? (await this.files.quotaTurn(this.files.catalogue.storageOf(to.storage_id), to.rel, item.entry.size)).turn : null;
        try {
          const written = await this.copyFile(ctx, from, to, item, report);
          if (item.rel !== '') await ops.written(to, written, fa.ctx(t.op));
        } finally {
          turn?.release();
        }
        await ctx.journal.put(`f:${item.rel}`);
      }
      done += item.entry.size;
      ctx.progress(total ? done / total : 1, { done, total });
    }
  }

  /**
   * One file's bytes to the target: in journalled parts when the target can
   * stage them and the file spans several (resumes mid-file, chunked-copy.ts),
   * else in one atomic write (a crash restarts that file).
   */
  private async copyFile(
    ctx: JobContext<TransferPayload>,
    from: Place,
    to: Place,
    item: TreeItem,
    report: (bytes: number, resumedAt?: number) => void,
  ): Promise<Entry> {
    const ops = this.files.ops;
    const mp = await chunkable(ops, to, item.entry.size);
    if (!mp)
      return ops.write(to, await ops.read(from, undefined, ctx.signal), { size: item.entry.size, mime: item.entry.mime, overwrite: true, signal: ctx.signal });
    const key = `c:${item.rel}`;
    try {
      return await copyInParts(ops, mp, { from, to, source: item.entry, journal: ctx.journal, key, signal: ctx.signal, onCommitted: report });
    } catch (e) {
      // A stopping server resumes the op at the next boot from these parts; any other end discards them.
      if (!ctx.interrupted()) await abandonParts(mp, ctx.journal, key);
      throw e;
    }
  }

  /**
   * Whether an earlier attempt already wrote this file: recorded in the
   * journal, or present at the target with the source's size (written, the
   * crash came before the record; it is announced now so the catalogue
   * converges).
   */
  private async committed(ctx: JobContext<TransferPayload>, fa: ActorFiles, to: Place, item: TreeItem): Promise<boolean> {
    const key = `f:${item.rel}`;
    if (await ctx.journal.has(key)) return true;
    const at = await this.files.ops.statOrNull(to);
    if (!at || at.type !== 'file' || at.size !== item.entry.size || ctx.payload.overwrite) return false;
    if (item.rel !== '') await this.files.ops.written(to, at, fa.ctx(ctx.payload.op));
    await ctx.journal.put(key);
    return true;
  }
}
