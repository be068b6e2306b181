/**
 * The fan-out. After a primary change succeeded (the decorator calls
 * `changed`), the engine decides by rule whether and how it reaches the
 * storage's linked target, then either queues a `replica.copy` job (async
 * targets) or runs it before the write answers (sync targets).
 *
 * Jobs are state-based: a `write` job copies what the primary holds *now*
 * (nothing when the path is gone), a `delete` job removes the target copy
 * only when the primary no longer has the path. So a burst of writes to one
 * path coalesces into one queued job (dedup key per storage, op and path),
 * and a delete can never overtake the write before it: whichever runs first,
 * the end state follows the primary. Jobs touching a path also run one at a
 * time in this process (a keyed lock), so a copy in flight never lands after
 * the delete that followed it.
 */
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { untilFree, type TenantScope } from '../db';
import { AppError, isAppError } from '../errors';
import type { EventBus } from '../events';
import type { JobContext, JobQueue } from '../jobs';
import { isInternalName, joinRel, parentRel, uiPath } from '../lib/paths';
import { pipeFrom } from '../lib/streams';
import type { ReplicaPolicy } from './policy';
import { ReadbackSample } from './readback';
import { TargetDirs } from './target-dirs';
import type { FailureRow, ReplicationRepo } from './replication.repo';
import type { TargetsService } from './targets.service';
import type { CopyPayload, FailureCode, RDriver, REntry, ReplicaMode } from './types';

export const RAW = Symbol('replication.raw');
const TRASH = '.service-trash';
/** After an attempt on a target times out, its other jobs fail at once for this long instead of hanging too. */
export const HUNG_PAUSE_MS = 60_000;
/**
 * How long queueing the copies of a sync batch or a tick rides out a busy database (`database_busy`: a pool
 * checkout or a lock that waited past its bound while a first sync keeps the database busy). Off any request's
 * path, so longer than a request's wait; past it the content audit finds the copies.
 */
const QUEUE_WAIT_MS = 60_000;

export interface EngineDeps {
  repo: ReplicationRepo;
  policy: ReplicaPolicy;
  targets: TargetsService;
  queue: JobQueue;
  bus: EventBus;
  /** The tenant of the storage with uid `uid` (or, given a number, that id); undefined when it is gone. No query. */
  storageTenant: (storage: string | number) => TenantScope | undefined;
  /** The live (decorated) driver of a storage; the engine reads through the undecorated one under it. */
  primary: (storageId: number) => Promise<RDriver>;
  log: (msg: string, err?: unknown) => void;
  /** Base backoff between attempts of a failed copy (doubles per attempt). */
  backoffMs: number;
  /** Bound on one attempt; a target that hangs fails the attempt, the queue goes on. */
  timeoutMs: number;
}

/** The mode of a path (`rel` in the storage named `storage`) under the rules. */
export type ModeOf = (storage: string, rel: string) => ReplicaMode;

/** A storage's enabled target (of the storage's tenant). */
interface Link {
  tenant: TenantScope;
  storageId: number;
  storage: string;
  targetId: number;
  sync: boolean;
}

/** How one attempt ended (apply); a throw is a failure. */
type Outcome = 'done' | 'unlinked' | 'off' | 'missing';

/** A failure to replicate, with its spec code. */
class ReplicaFailure extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
  ) {
    super(message);
  }
}

export class ReplicationEngine {
  private locks = new Map<string, Promise<unknown>>();
  /** Changes of this tick whose job rows are not written yet, by dedup key, with their storage's tenant. */
  private pending = new Map<string, { p: CopyPayload; tenant: TenantScope }>();
  /** Targets whose last attempt hung, with the time until which their jobs fail fast. */
  private hung = new Map<number, number>();
  private dirs = new TargetDirs();

  constructor(private d: EngineDeps) {}

  /** Registers the job handlers (`replica.copy`, `replica_retry`) on the queue. */
  register(): void {
    const opts = { concurrency: 2, maxAttempts: 3, backoffMs: this.d.backoffMs, timeoutMs: this.d.timeoutMs, governed: 'io' as const };
    this.d.queue.register('replica.copy', (ctx) => this.runJob(ctx.payload, ctx), { ...opts, keepsAwake: true });
    this.d.queue.register(
      'replica_retry',
      async (ctx) => {
        // A retry is queued in its failure's tenant (the storage's).
        const f = await this.d.repo.failure(ctx.tenant, ctx.payload.failure_id);
        if (!f || f.resolved_at) return { skipped: true };
        // Everything the first attempt knew: an append_only file moved away is read from where it went.
        return this.runJob(
          { storage_id: f.storage_id, op: f.op, rel: f.rel, ...(f.to_rel ? { to: f.to_rel } : {}), ...(f.from_rel ? { from: f.from_rel } : {}) },
          ctx,
        );
      },
      opts,
    );
  }

  /** Whether storage `uid` (or, given a number, that id) has an enabled target right now (cheap: one indexed read). */
  async linkedTarget(storage: string | number): Promise<Link | null> {
    const of = this.d.storageTenant(storage);
    if (!of) return null;
    const tenant = { tenant_id: of.tenant_id };
    const l = await this.d.repo.linkOf(tenant, storage);
    return l && { tenant, storageId: l.storage_id, storage: l.storage, targetId: l.target_id, sync: l.mode === 'sync' };
  }

  /**
   * A primary change succeeded: replicate it per the rules. Never throws (the
   * primary write stands whatever happens to its copy); for a sync target it
   * resolves once the copy is on the target or its failure is logged.
   */
  async changed(uid: string, kind: 'write' | 'mkdir' | 'delete' | 'move' | 'copy', rel: string, to?: string): Promise<void> {
    try {
      const link = await this.linkedTarget(uid);
      if (!link) return;
      for (const p of this.plan(await this.modes(link.tenant), link.storage, kind, rel, to)) {
        const payload: CopyPayload = { storage_id: link.storageId, ...p };
        if (link.sync) await this.runNow(link.tenant, payload);
        else this.enqueue(link.tenant, payload);
      }
    } catch (e) {
      this.d.log(`replication of ${kind} ${rel} could not be queued`, e);
    }
  }

  /**
   * Changes the catalogue's sync or watcher found on the backend, made
   * outside the service (a photo dropped into the folder, a file deleted on
   * disk). Queued like the decorator's changes under the same per-path keys,
   * so a change both of them see is copied once; never run inline, even for
   * a sync target: a sync hook only enqueues.
   */
  async synced(storageId: number, kind: 'write' | 'delete', rels: string[]): Promise<void> {
    try {
      const link = await untilFree(() => this.linkedTarget(storageId), QUEUE_WAIT_MS);
      if (!link) return;
      const modes = await this.modes(link.tenant);
      for (const rel of rels) for (const p of this.plan(modes, link.storage, kind, rel)) this.enqueue(link.tenant, { storage_id: link.storageId, ...p });
    } catch (e) {
      this.d.log(`replication of ${rels.length} synced ${kind}s could not be queued`, e);
    }
  }

  /** Jobs for one primary change under the mode table (spec: Replication semantics 4). */
  private plan(
    modes: ModeOf,
    storage: string,
    kind: 'write' | 'mkdir' | 'delete' | 'move' | 'copy',
    rel: string,
    to?: string,
  ): Array<Omit<CopyPayload, 'storage_id'>> {
    const mode = (r: string) => modes(storage, r);
    switch (kind) {
      case 'write':
      case 'mkdir':
        return mode(rel) === 'skip' ? [] : [{ op: 'write', rel }];
      case 'delete':
        return mode(rel) === 'mirror' ? [{ op: 'delete', rel }] : [];
      case 'copy':
        return to && mode(to) !== 'skip' ? [{ op: 'copy', rel: to }] : [];
      case 'move': {
        if (!to) return [];
        const from = mode(rel);
        const dest = mode(to);
        // A move into the trash is a delete of its source: append_only keeps the backup copy where it was.
        if (from === 'mirror' && dest !== 'skip' && !isTemp(rel)) return [{ op: 'move', rel, to }];
        const out: Array<Omit<CopyPayload, 'storage_id'>> = [];
        if (dest !== 'skip') out.push({ op: 'copy', rel: to });
        if (from === 'mirror' && !isTemp(rel)) out.push({ op: 'delete', rel });
        // append_only keeps the old path on the target: if its own copy had not run yet when the file
        // moved away (written, then deleted at once), it is read from where the file went.
        if (from === 'append_only' && !isTemp(rel)) out.push({ op: 'copy', rel, from: to });
        return out;
      }
    }
  }

  /**
   * Queues a job; a job already queued for the same (storage, op, path)
   * absorbs it. While one runs, the next change gets its own (second) key,
   * so a write that lands during a copy is never lost to the running job.
   * The rows are written at the end of the tick, one transaction for all the
   * tick's changes: the primary write answers without waiting for a commit.
   * The op is the storage's tenant's (`tenant`).
   */
  enqueue(tenant: TenantScope, p: CopyPayload): void {
    this.pending.set(`replica:${p.storage_id}:${p.op}:${p.rel}${p.to ? `>${p.to}` : ''}${p.from ? `<${p.from}` : ''}`, { p, tenant });
    if (this.pending.size === 1) setImmediate(() => void this.flush());
  }

  /** Writes the pending job rows now (the end of a tick, and at close). */
  async flush(): Promise<void> {
    if (!this.pending.size) return;
    const batch = [...this.pending];
    this.pending.clear();
    try {
      // One unit for the tick's copies, each in its storage's tenant.
      const items = batch.map(([base, { p, tenant }]) => ({ payload: p, o: { tenant, dedupKey: base, behindRunning: true, priority: -1 } }));
      await untilFree(() => this.d.queue.enqueueAll('replica.copy', items), QUEUE_WAIT_MS);
    } catch (e) {
      // The database held by another program past its wait: the content audit finds these copies later.
      this.d.log(`replication: ${batch.length} copies could not be queued`, e);
    }
  }

  /** Runs a job now (sync targets); a failure is logged and retried by the queue. */
  private async runNow(tenant: TenantScope, p: CopyPayload): Promise<void> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new AppError('timeout')), this.d.timeoutMs);
    try {
      await this.run(p, ac.signal, true);
    } catch {
      this.enqueue(tenant, p);
    } finally {
      clearTimeout(timer);
    }
  }

  private async runJob(p: CopyPayload, ctx: Pick<JobContext, 'signal'>): Promise<unknown> {
    return { ok: (await this.run(p, ctx.signal, false)) !== 'missing' };
  }

  /**
   * One attempt: replicate, resolve the failure row on success, record it (and
   * rethrow) on failure. A storage unlinked since has nothing to repair
   * against: its row for this key is dropped. A copy that found nothing to
   * read where the target still owes the bytes (`missing`) resolves nothing:
   * an open row says so and stays open; without one, the job that moved the
   * file away carries the copy.
   */
  private async run(p: CopyPayload, signal: AbortSignal, inline: boolean): Promise<Outcome> {
    // System work that knows its storage by id: the storage's tenant is the one every row here is written in.
    const s = this.d.storageTenant(p.storage_id);
    // A storage deleted since: its failure rows went with it, nothing to copy or repair.
    if (!s) return 'unlinked';
    const keys = [p.rel, ...(p.to ? [p.to] : [])].map((r) => `${p.storage_id}:${r}`).sort();
    try {
      const outcome = await this.locked(keys, () => bounded(signal, this.apply(s, p, signal)));
      if (outcome === 'done') {
        await this.d.repo.resolve(s, p.storage_id, p.rel, p.op);
        // A copy that landed carries at least what a write of the same path would (the file's last bytes).
        if (p.op === 'copy') await this.d.repo.resolve(s, p.storage_id, p.rel, 'write');
      } else if (outcome === 'unlinked') await this.d.repo.dropFailure(s, p.storage_id, p.rel, p.op);
      else if (outcome === 'missing') {
        // Only an open row is told (one conditional statement: a row resolved meanwhile stays resolved).
        const gone = p.from ? `neither ${p.from} nor ${p.rel} is` : `${p.rel} is not`;
        await this.d.repo.recordIfOpen(s, {
          ...this.rowKey(p),
          code: 'PRIMARY_READBACK_FAIL',
          message: `nothing to copy: ${gone} on the primary now (append_only: the target keeps the copy it had)`,
        });
      }
      return outcome;
    } catch (e) {
      // A shutdown or a cancel is no failure of the target: the queue resumes the op later.
      if (signal.aborted && isAppError(signal.reason) && signal.reason.code === 'cancelled') throw signal.reason;
      if (signal.aborted) await this.markHung(s, p.storage_id);
      const f = e instanceof ReplicaFailure ? e : new ReplicaFailure('REPLICA_WRITE_FAIL', message(e));
      const { row, opened } = await this.d.repo.recordFailure(s, { ...this.rowKey(p), code: f.code, message: f.message });
      if (opened) await this.announce(s, row);
      if (!inline) this.d.log(`replication ${p.op} ${p.rel} failed (${f.code}, attempt ${row.attempts}): ${f.message}`);
      throw new AppError('storage_unreachable', { reason: `${f.code}: ${f.message}` }, undefined, `${f.code}: ${f.message}`);
    }
  }

  /** A job's failure-row fields: its key and everything a retry needs to do the same work. */
  private rowKey(p: CopyPayload) {
    return { storage_id: p.storage_id, rel: p.rel, op: p.op, to_rel: p.to ?? null, from_rel: p.from ?? null };
  }

  /**
   * The undecorated primary driver and the live target driver of a storage,
   * or null when it has no enabled target (the audit's access to both sides).
   */
  async sides(storageId: number): Promise<{ primary: RDriver; target: RDriver; storage: string; tenant: TenantScope } | null> {
    const tenant = this.d.storageTenant(storageId);
    const s = tenant && (await this.d.repo.storage(tenant, storageId));
    const t = s?.replica_target_id ? await this.d.repo.target(s, s.replica_target_id) : undefined;
    if (!s || !t?.enabled) return null;
    const live = await this.d.primary(storageId);
    return {
      primary: (live as RDriver & { [RAW]?: RDriver })[RAW] ?? live,
      target: await this.d.targets.driver(s, t.id),
      storage: s.name,
      tenant: { tenant_id: s.tenant_id },
    };
  }

  /** Tenant `s`'s rules as they are now: the mode of `rel` in its storage `storage` (temp names are always skipped). */
  async modes(s: TenantScope): Promise<ModeOf> {
    const modeFor = await this.d.policy.matcher(s);
    return (storage, rel) => (isTemp(rel) ? 'skip' : modeFor(storage, rel));
  }

  private async markHung(s: TenantScope, storageId: number): Promise<void> {
    const t = (await this.d.repo.storage(s, storageId))?.replica_target_id;
    if (t) this.hung.set(t, Date.now() + HUNG_PAUSE_MS);
  }

  /** Tells the storage's tenant a failure row opened (its bell and webhooks). */
  private async announce(s: TenantScope, f: FailureRow): Promise<void> {
    const name = (await this.d.repo.storage(s, f.storage_id))?.name ?? String(f.storage_id);
    await this.d.bus.emit(s, 'replica_fail', {
      title: 'Backup copy failed',
      body: `${f.op} ${uiPath(name, f.rel)}: ${f.message}`,
      path: uiPath(name, f.rel),
      op: f.op,
      code: f.code,
      message: f.message,
      attempts: f.attempts,
    });
  }

  /**
   * Replicates one change. `unlinked`: the storage has no target any more
   * (nothing to do, nothing to repair); `off`: its target is disabled (a
   * failure row stays as it is until the target is enabled and fixed);
   * `missing`: a write or copy found nothing to read on the primary for an
   * append_only path, whose target copy must hold the file's last bytes.
   */
  private async apply(scope: TenantScope, p: CopyPayload, signal: AbortSignal): Promise<Outcome> {
    const s = await this.d.repo.storage(scope, p.storage_id);
    // Only a target of the storage's own tenant (a link to another's is no link).
    const t = s?.replica_target_id ? await this.d.repo.target(scope, s.replica_target_id) : undefined;
    if (!t) return 'unlinked';
    if (!t.enabled) return 'off';
    // One slow target must not hold every copy slot: while it is known to hang, its jobs fail fast (and are retried, or fixed later).
    if ((this.hung.get(t.id) ?? 0) > Date.now()) throw new ReplicaFailure('REPLICA_WRITE_FAIL', `target "${t.name}" did not answer in time; its copies wait`);
    let target: RDriver;
    try {
      target = await this.d.targets.driver(scope, t.id);
    } catch (e) {
      throw new ReplicaFailure('REPLICA_NO_WRITER', `target "${t.name}" cannot be opened: ${message(e)}`);
    }
    let primary: RDriver;
    try {
      const live = await this.d.primary(p.storage_id);
      primary = (live as RDriver & { [RAW]?: RDriver })[RAW] ?? live;
    } catch (e) {
      throw new ReplicaFailure('PRIMARY_READBACK_FAIL', message(e));
    }
    switch (p.op) {
      case 'write':
      case 'copy': {
        const deep = p.op === 'copy';
        // Read where the file went; back at its old path (restored from the trash) it is read there.
        const found = (await this.push(primary, target, p.rel, deep, signal, p.from)) || (!!p.from && (await this.push(primary, target, p.rel, deep, signal)));
        // Gone from a mirror path: the target follows the primary (the delete or move job removes its copy).
        if (!found && (await this.modes(scope))(s!.name, p.rel) === 'append_only') return 'missing';
        break;
      }
      case 'delete':
        // Written again since: the later write job copies it.
        if (!(await statOrNull(primary, p.rel))) await this.targetDelete(target, p.rel);
        break;
      case 'move':
        await this.move(primary, target, p.rel, p.to!, signal);
        break;
    }
    return 'done';
  }

  /**
   * Copies `rel` (a file, or with `deep` a whole folder) from the primary as it is now (read at `from`, by
   * default `rel`); false when the primary has nothing there.
   */
  private async push(primary: RDriver, target: RDriver, rel: string, deep: boolean, signal: AbortSignal, from = rel): Promise<boolean> {
    const top = await statOrNull(primary, from);
    if (!top) return false;
    if (top.type === 'file') return this.copyFile(primary, target, rel, top, signal, from);
    await this.targetOp(() => target.mkdir(rel));
    if (!deep) return true;
    for (const item of await tree(primary, from, signal)) {
      signal.throwIfAborted();
      if (item.type === 'dir') await this.targetOp(() => target.mkdir(joinRel(rel, item.path)));
      else await this.copyFile(primary, target, joinRel(rel, item.path), item, signal, joinRel(from, item.path));
    }
    return true;
  }

  /**
   * Streams one file primary → target (never buffered whole), then checks the target's size and content
   * (readback.ts); false when the file was gone from the primary by the time it was read.
   */
  private async copyFile(primary: RDriver, target: RDriver, rel: string, entry: REntry, signal: AbortSignal, from = rel): Promise<boolean> {
    let source;
    try {
      source = await primary.read(from, undefined, signal);
    } catch (e) {
      if (isAppError(e) && e.code === 'not_found') return false; // gone since: a delete or move job follows
      throw new ReplicaFailure('PRIMARY_READBACK_FAIL', message(e));
    }
    let sourceError: Error | null = null;
    let bytes = 0;
    const sample = new ReadbackSample(entry.size);
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        sample.see(chunk, bytes);
        bytes += chunk.length;
        cb(null, chunk);
      },
    });
    // stream.pipeline underneath; only the source's own failure counts as a read-back failure.
    const body = pipeFrom(source, counter, (e) => (sourceError ??= e));
    const dir = parentRel(rel);
    const known = dir !== '' && this.dirs.has(target, dir);
    if (dir && !known) {
      await this.targetOp(() => target.mkdir(dir)).catch((e) => {
        body.destroy();
        throw e;
      });
      this.dirs.add(target, dir);
    }
    // Read-back: what the target holds now must be what was sent (a target that truncates is caught here). The
    // entry a driver's write returns is its stat of the stored file (every built-in driver stats after writing).
    let got: REntry;
    try {
      got = await target.write(rel, body, { size: entry.size, mime: entry.mime, overwrite: true, signal });
    } catch (e) {
      body.destroy();
      this.dirs.forget(target, dir);
      if (sourceError) throw new ReplicaFailure('PRIMARY_READBACK_FAIL', message(sourceError));
      // The folder was removed on the target since this engine made it: make it again, read the primary again.
      if (known && isAppError(e) && e.code === 'not_found') return this.copyFile(primary, target, rel, entry, signal, from);
      throw new ReplicaFailure('REPLICA_WRITE_FAIL', message(e));
    }
    if (sourceError) throw new ReplicaFailure('PRIMARY_READBACK_FAIL', message(sourceError));
    if (got.size !== bytes) throw new ReplicaFailure('REPLICA_WRITE_FAIL', `read-back size ${got.size} differs from the ${bytes} bytes sent`);
    let at: number | null;
    try {
      at = await sample.mismatch(target, rel, signal);
    } catch (e) {
      throw new ReplicaFailure('REPLICA_WRITE_FAIL', `read-back of the content failed: ${message(e)}`);
    }
    if (at !== null) throw new ReplicaFailure('REPLICA_WRITE_FAIL', `read-back: the bytes at offset ${at} differ from those sent`);
    return true;
  }

  private async move(primary: RDriver, target: RDriver, from: string, to: string, signal: AbortSignal): Promise<void> {
    const now = await statOrNull(primary, to);
    let moved = false;
    if (target.move && now) {
      try {
        if (parentRel(to)) await target.mkdir(parentRel(to));
        this.dirs.forget(target, from);
        await target.move(from, to, { overwrite: true });
        moved = true;
      } catch (e) {
        if (!(isAppError(e) && (e.code === 'not_found' || e.code === 'unsupported'))) throw new ReplicaFailure('REPLICA_WRITE_FAIL', message(e));
      }
    }
    if (moved && now!.type === 'file') {
      const got = await statOrNull(target, to, 'target');
      moved = !!got && got.size === now!.size;
    }
    if (!moved && now) await this.push(primary, target, to, true, signal);
    if (!moved && !(await statOrNull(primary, from))) await this.targetDelete(target, from);
  }

  private async targetDelete(target: RDriver, rel: string): Promise<void> {
    this.dirs.forget(target, rel);
    try {
      await target.delete(rel);
    } catch (e) {
      if (isAppError(e) && e.code === 'not_found') return;
      throw new ReplicaFailure('REPLICA_WRITE_FAIL', message(e));
    }
  }

  private async targetOp(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      if (e instanceof ReplicaFailure) throw e;
      throw new ReplicaFailure('REPLICA_WRITE_FAIL', message(e));
    }
  }

  /** Runs `fn` once every earlier holder of any of `keys` is done (keys sorted: no deadlock). */
  private async locked<T>(keys: string[], fn: () => Promise<T>): Promise<T> {
    const before = keys.map((k) => this.locks.get(k) ?? Promise.resolve());
    const run = Promise.allSettled(before).then(fn);
    const settled = run.catch(() => undefined);
    for (const k of keys) this.locks.set(k, settled);
    void settled.then(() => keys.forEach((k) => this.locks.get(k) === settled && this.locks.delete(k)));
    return run;
  }
}

/** Temp and staging names are never replicated (their final rename is). */
const isTemp = (rel: string) => rel.split('/').some((n) => isInternalName(n) && n !== TRASH && n !== '.versions');

/** The entry at `rel`, or null when missing; any other error is a failure of `side`. */
async function statOrNull(d: RDriver, rel: string, side: 'primary' | 'target' = 'primary'): Promise<REntry | null> {
  try {
    return await d.stat(rel);
  } catch (e) {
    if (isAppError(e) && e.code === 'not_found') return null;
    throw new ReplicaFailure(side === 'primary' ? 'PRIMARY_READBACK_FAIL' : 'REPLICA_WRITE_FAIL', message(e));
  }
}

/** Hex sha256 of a file on one side, streamed; null when it is not there (other errors propagate). */
export async function hashOf(d: RDriver, rel: string, signal: AbortSignal): Promise<string | null> {
  try {
    const h = createHash('sha256');
    for await (const chunk of await d.read(rel, undefined, signal)) h.update(chunk as Buffer);
    return h.digest('hex');
  } catch (e) {
    if (isAppError(e) && e.code === 'not_found') return null;
    throw e;
  }
}

/** Everything below folder `rel`, parents first, paths relative to it. */
export async function tree(d: RDriver, rel: string, signal: AbortSignal): Promise<Array<REntry & { path: string }>> {
  const out: Array<REntry & { path: string }> = [];
  try {
    if (d.walk) {
      for await (const w of d.walk(rel, signal)) if (w.path !== '') out.push(w);
      return out.sort((a, b) => a.path.split('/').length - b.path.split('/').length);
    }
    const dirs = [''];
    while (dirs.length) {
      const at = dirs.shift()!;
      for await (const e of d.list(at === '' ? rel : joinRel(rel, at))) {
        const path = at === '' ? e.name : joinRel(at, e.name);
        out.push({ ...e, path });
        if (e.type === 'dir') dirs.push(path);
      }
    }
    return out;
  } catch (e) {
    throw new ReplicaFailure('PRIMARY_READBACK_FAIL', message(e));
  }
}

/** Rejects when `signal` fires even if `work` never settles (a hung target). */
function bounded<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(new ReplicaFailure('REPLICA_WRITE_FAIL', 'timed out'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ReplicaFailure('REPLICA_WRITE_FAIL', `aborted: ${message(signal.reason)}`));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function message(e: unknown): string {
  if (isAppError(e)) return typeof e.params.reason === 'string' && e.params.reason ? e.params.reason : e.message;
  return e instanceof Error ? e.message : String(e);
}
