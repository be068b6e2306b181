/**
 * Persistent op queue. Ops survive restarts. Queueing, picking, leasing and
 * finishing are short statements on `db.async` (ops.repo.ts); handlers run
 * outside any transaction.
 *
 * SQLite (one instance per database): a row left `running` by a crash is
 * re-queued at boot. PostgreSQL (several instances may share the database):
 * a claim takes the row with `FOR UPDATE SKIP LOCKED` and writes a lease (the
 * instance id in `lease_owner`, `lease_until`); a running op's lease is
 * renewed every third of it; at start and at every renewal tick an instance
 * re-queues running ops whose lease passed (their instance died: the op
 * journal makes the resumed attempt skip finished steps). An op whose lease
 * this instance lost (taken over) is aborted here and its outcome dropped.
 *
 * An op belongs to a tenant (`EnqueueOptions.tenant`): reading, listing and cancelling take one, and another
 * tenant's op is not found. The pump runs every tenant's ops, each in its own tenant.
 */
import { randomBytes } from 'node:crypto';
import { isBusy, untilFree, type Db } from '../db';
import { AppError, isAppError, type Params } from '../errors';
import type { EnqueueOptions, JobContext, JobHandler, JobHandlerOptions, JobName, JobPayloads, Operation, OpStatus } from './types';
import type { OpsTable } from '../db/tables';
import type { TenantScope } from '../db/tenant-tables';
import { Journals } from './journal';
import { OpsRepo, type NewOp } from './ops.repo';
import { present } from './present';
import type { Governor, Release, UnitClass } from './governor';

interface Registered {
  handler: JobHandler;
  opts: Required<Omit<JobHandlerOptions, 'timeoutMs' | 'governed' | 'keepsAwake'>> & Pick<JobHandlerOptions, 'timeoutMs' | 'governed' | 'keepsAwake'>;
  running: number;
}

const PROGRESS_WRITE_MS = 500;
/** How soon the pump tries again after the database was held by another program. */
const BUSY_RETRY_MS = 250;
/** How soon an op cut short by an unavailable database runs again (the breaker's Retry-After). */
const DB_AWAY_RETRY_MS = 2000;
const now = () => new Date().toISOString();
/** How long a claimed op stays ours without a renewal (PostgreSQL); renewed every third of it. */
export const DEFAULT_LEASE_MS = 60_000;

export class JobQueue {
  private handlers = new Map<string, Registered>();
  private controllers = new Map<string, AbortController>();
  private active = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  private stopping = false;
  private paused = false;
  private pumping = false;
  /** A kick that came while a pass was waiting for the database: the pass ends by pumping again at once. */
  private kickedMeanwhile = false;
  /** The queue's place in the governor's line, per unit class: one lane asked for at a time, held until the next pass uses it. */
  private lanes: Record<UnitClass, { held: Release | null; asking: boolean }> = { cpu: { held: null, asking: false }, io: { held: null, asking: false } };
  private laneStop = new AbortController();
  private onChange: (op: OpChange) => void = () => {};

  private ops: OpsRepo;
  private journals: Journals;
  /** This process's id in `lease_owner` (random per start; logged by the composition root). */
  readonly instanceId: string;
  /** Several instances may share the database (PostgreSQL): leases are written, renewed and taken over. */
  private leased: boolean;
  private leaseMs: number;
  private leaseTimer: NodeJS.Timeout | null = null;
  /** Running ops whose lease another instance took over: their outcome is not ours to record. */
  private lost = new Set<string>();
  /**
   * Ops claimed for this process that never started here (the database went away between the claim and the
   * start, or a claim's answer was lost while it committed): given back to the queue as soon as it answers.
   */
  private orphans = new Map<string, TenantScope>();
  /** Ops claimed by a pump pass and not started yet: a lease renewal meanwhile must not take them for orphans. */
  private starting = new Set<string>();
  /** A lease renewal in flight (the next tick waits for it). */
  private ticking = false;

  constructor(
    db: Db,
    private opts: {
      concurrency?: number;
      pollMs?: number;
      log?: (msg: string, err?: unknown) => void;
      governor?: Governor;
      /** The instance id written as `lease_owner` (default: random). */
      instanceId?: string;
      /** Lease length on PostgreSQL (default 60 s). */
      leaseMs?: number;
    } = {},
  ) {
    this.instanceId = opts.instanceId ?? randomBytes(6).toString('hex');
    this.leased = db.dialect === 'postgres';
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.ops = new OpsRepo(db);
    this.journals = new Journals(db);
    // A freed lane, a recovered budget or a wake-up may let waiting background ops start.
    opts.governor?.onChange(() => this.kick());
  }

  /** Registers the handler of a job kind (one per kind). */
  register<K extends JobName>(kind: K, handler: JobHandler<JobPayloads[K]>, opts: JobHandlerOptions = {}): void {
    this.handlers.set(kind, {
      handler,
      opts: {
        concurrency: opts.concurrency ?? 1,
        maxAttempts: opts.maxAttempts ?? 3,
        backoffMs: opts.backoffMs ?? 5000,
        timeoutMs: opts.timeoutMs,
        governed: opts.governed,
        keepsAwake: opts.keepsAwake,
      },
      running: 0,
    });
  }

  /** The kinds that have a handler. */
  registeredKinds(): string[] {
    return [...this.handlers.keys()];
  }

  /** Throws when a listed kind has no handler (the composition root calls it before start). */
  assertHandlers(kinds: readonly string[]): void {
    const missing = kinds.filter((k) => !this.handlers.has(k));
    if (missing.length) throw new Error(`job kinds without a handler: ${missing.join(', ')}`);
  }

  /** Called whenever an op row changes state or progress (realtime frames). */
  onOpChange(fn: (op: OpChange) => void): void {
    this.onChange = fn;
  }

  /** Queues an op and returns its id (an existing op's id when the dedup key is live). */
  async enqueue<K extends JobName>(kind: K, payload: JobPayloads[K], o: EnqueueOptions): Promise<string> {
    const { id, inserted } = await this.ops.enqueue(this.newOp(kind, payload, o), !!o.behindRunning);
    if (inserted) this.queued([{ id, o }]);
    return id;
  }

  /** Queues several ops of one kind in one unit (one commit for a batch); their ids, in order, as `enqueue`. */
  async enqueueAll<K extends JobName>(kind: K, items: Array<{ payload: JobPayloads[K]; o: EnqueueOptions }>): Promise<string[]> {
    if (!items.length) return [];
    const made = await this.ops.enqueueAll(items.map((it) => ({ op: this.newOp(kind, it.payload, it.o), behindRunning: !!it.o.behindRunning })));
    this.queued(made.flatMap((m, i) => (m.inserted ? [{ id: m.id, o: items[i]!.o }] : [])));
    return made.map((m) => m.id);
  }

  private newOp<K extends JobName>(kind: K, payload: JobPayloads[K], o: EnqueueOptions): NewOp {
    const reg = this.handlers.get(kind);
    if (!reg) throw new Error(`no handler for job kind "${kind}"`);
    return {
      id: 'op_' + randomBytes(10).toString('hex'),
      tenant_id: o.tenant.tenant_id,
      kind,
      priority: o.priority ?? 0,
      payload: JSON.stringify(payload ?? {}),
      owner_id: o.ownerId ?? null,
      visible: !!o.visible,
      dedup_key: o.dedupKey ?? null,
      max_attempts: o.maxAttempts ?? reg.opts.maxAttempts,
      run_at: (o.runAt ?? new Date()).toISOString(),
    };
  }

  /** New rows are in: a visible one is announced (its owner's ops list), the pump looks. */
  private queued(made: Array<{ id: string; o: EnqueueOptions }>): void {
    if (!made.length) return;
    for (const { id, o } of made) if (o.visible) this.onChange({ id, tenant_id: o.tenant.tenant_id, owner_id: o.ownerId ?? null, visible: true });
    this.kick();
  }

  /**
   * Starts workers and re-queues ops a crash left running: on SQLite every running op (this process is the
   * database's only instance); on PostgreSQL only those whose lease passed (another live instance's are its own).
   */
  async start(o: { alone?: boolean } = {}): Promise<void> {
    if (this.started) return;
    this.started = true;
    // Alone (SQLite, or no other server on the PostgreSQL: db/instances.repo.ts): every running op was cut short.
    if (!this.leased || o.alone) await this.ops.requeueAllRunning();
    if (this.leased) {
      if (!o.alone) await this.takeOver();
      this.leaseTimer = setInterval(() => void this.leaseTick(), Math.max(50, Math.floor(this.leaseMs / 3)));
      this.leaseTimer.unref();
    }
    this.schedule(0);
  }

  /**
   * Re-queues running ops whose lease passed (their instance stopped renewing: killed, frozen or cut off);
   * a running op with no lease at all was claimed by a version without leases and is treated as expired.
   */
  private async takeOver(): Promise<number> {
    const n = await this.ops.requeueExpired();
    if (n) this.opts.log?.(`ops: ${n} running op(s) whose lease passed re-queued by instance ${this.instanceId}`);
    return n;
  }

  /** Renews the leases of this instance's running ops, aborts the ones it lost, takes over expired ones. */
  private async leaseTick(): Promise<void> {
    if (this.stopping || this.ticking) return;
    this.ticking = true;
    try {
      // Only ops running before the renewal are judged by it: one started during its round trip is not lost.
      const judged = [...this.controllers.keys()];
      const held = await this.ops.renewLeases(this.instanceId, new Date(Date.now() + this.leaseMs).toISOString());
      const ours = new Map(held.map((r) => [r.id, r.cancel_requested]));
      for (const r of held) if (!this.controllers.has(r.id) && !this.starting.has(r.id)) this.orphans.set(r.id, { tenant_id: r.tenant_id });
      await this.releaseOrphans();
      for (const id of judged) {
        const ac = this.controllers.get(id);
        if (!ac) continue;
        if (!ours.has(id)) {
          // Another instance re-queued it after our lease passed (this process stalled): it is theirs now.
          this.lost.add(id);
          this.opts.log?.(`op ${id}: lease lost to another instance; stopping it here`);
          ac.abort(new AppError('cancelled', {}, undefined, 'lease lost'));
        } else if (ours.get(id) === 1) ac.abort(new AppError('cancelled')); // cancelled through another instance
      }
      if (await this.takeOver()) this.kick();
    } catch (e) {
      if (!isBusy(e)) this.opts.log?.('ops: lease renewal failed', e);
    } finally {
      this.ticking = false;
    }
  }

  /** Gives the orphans back to the queue, their attempt refunded (their handler never ran here). */
  private async releaseOrphans(): Promise<void> {
    let n = 0;
    for (const [id, tenant] of [...this.orphans]) {
      n += await this.giveBack(tenant, id, now());
      this.orphans.delete(id);
    }
    if (n) {
      this.opts.log?.(`ops: ${n} op(s) claimed here but never started given back to the queue`);
      this.kick();
    }
  }

  /** Pauses or resumes picking background work (priority < 0 and kinds marked background keep waiting). */
  setPaused(paused: boolean): void {
    this.paused = paused;
    if (!paused) this.kick();
  }

  /**
   * Stops picking new ops, aborts running ones after `graceMs` and waits for
   * them; interrupted ops go back to `queued` so the next boot resumes them.
   */
  async stop(graceMs = 5000): Promise<void> {
    this.stopping = true;
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.laneStop.abort();
    this.returnHeldLanes();
    if (this.timer) clearTimeout(this.timer);
    const all = Promise.allSettled([...this.active]);
    // Not unref'd: a job waiting on something that holds no handle (a governor lane, a budget) would
    // otherwise let the process go idle with the stop pending forever instead of being cancelled below.
    let grace: NodeJS.Timeout | undefined;
    const timeout = new Promise((r) => (grace = setTimeout(r, graceMs)));
    await Promise.race([all, timeout]);
    clearTimeout(grace);
    for (const c of this.controllers.values()) c.abort(new AppError('cancelled', {}, undefined, 'shutdown'));
    await all;
  }

  /** Best-effort cancel of the tenant's op: a queued op is cancelled at once, a running one is signalled; another tenant's is left alone. */
  async cancel(s: TenantScope, id: string): Promise<void> {
    const c = await this.ops.cancel(s, id);
    if (!c) return;
    if (c.was === 'running') this.controllers.get(id)?.abort(new AppError('cancelled'));
    this.onChange({ id, tenant_id: s.tenant_id, owner_id: c.owner_id, visible: c.visible });
  }

  /** The tenant's op, or null for an unknown id (or another tenant's). */
  async get(s: TenantScope, id: string): Promise<Operation | null> {
    const row = await this.ops.row(s, id);
    return row ? present(row) : null;
  }

  /**
   * The tenant's visible ops of one owner (all its visible ops when ownerId is null), newest
   * first; with `keyId` only those an API key started (their payload's actor).
   */
  async listVisible(s: TenantScope, ownerId: number | null, limit = 100, keyId?: number): Promise<Operation[]> {
    return (await this.ops.listVisible(s, ownerId, limit, keyId)).map(present);
  }

  /** The owner of the tenant's op and the API key that started it (null: a person or system work), or undefined for an unknown id. */
  ownerOf(s: TenantScope, id: string): Promise<{ owner_id: number | null; key_id: number | null } | undefined> {
    return this.ops.ownerOf(s, id);
  }

  /** The tenant's op's payload as queued (a kind's presenter reads what it recorded there), or undefined for an unknown id. */
  async payloadOf(s: TenantScope, id: string): Promise<unknown> {
    const payload = await this.ops.payloadOf(s, id);
    return payload === undefined ? undefined : JSON.parse(payload);
  }

  /**
   * Whether the op of this id, in whichever tenant holds it, is queued or running: for system work that knows an
   * op by its id alone (a ZIP build's part file is named by its op).
   */
  liveInAnyTenant(id: string): Promise<boolean> {
    return this.ops.liveInAnyTenant(id);
  }

  /** Number of ops running in this process (for the host's activity signal). */
  get runningCount(): number {
    return this.controllers.size;
  }

  /** Running ops of the kinds registered with `keepsAwake`, counted per kind (none running: empty). */
  runningKeepingAwake(): Array<{ kind: string; count: number }> {
    return [...this.handlers].filter(([, r]) => r.opts.keepsAwake && r.running > 0).map(([kind, r]) => ({ kind, count: r.running }));
  }

  /** Queued and running ops counted per kind and status, across every instance (the metrics' queue depth). */
  depth(): Promise<Array<{ kind: string; status: 'queued' | 'running'; n: number }>> {
    return this.ops.depth();
  }

  /** Queued and running ops of the `keepsAwake` kinds, oldest first (at most `limit`): the work a restart resumes. */
  async liveKeepingAwake(limit = 50): Promise<Operation[]> {
    const kinds = [...this.handlers].filter(([, r]) => r.opts.keepsAwake).map(([kind]) => kind);
    return (await this.ops.liveOfKinds(kinds, limit)).map(present);
  }

  /** Resolves when no op is running or due within `horizonMs` (tests, CLI one-shots). */
  async idle(timeoutMs = 30_000, horizonMs = 2000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const busy = await this.ops.busy(new Date(Date.now() + horizonMs).toISOString());
      if (busy === 0 && this.active.size === 0) return;
      if (Date.now() > end) throw new Error('queue did not become idle');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private kick(): void {
    if (!this.started || this.stopping) return;
    // During a pass its own timer would be replaced by the pass's closing schedule (the poll): an op that
    // ended meanwhile then waited a whole poll before the next one started. The pass pumps again instead.
    if (this.pumping) this.kickedMeanwhile = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.pump(), ms);
    this.timer.unref();
  }

  private async pump(): Promise<void> {
    if (this.stopping) return;
    if (this.pumping) {
      this.kickedMeanwhile = true;
      return;
    }
    this.pumping = true;
    this.kickedMeanwhile = false;
    try {
      await this.releaseOrphans();
      const limit = this.opts.concurrency ?? 4;
      const t = now();
      // Only kinds with a free slot are read: a backlog of one kind at its own limit (a thousand copies to a
      // backup target) must not hide, behind its first rows, the work of every other kind.
      const open = [...this.handlers].filter(([, reg]) => reg.running < reg.opts.concurrency).map(([kind]) => kind);
      const ready = this.controllers.size >= limit || open.length === 0 ? [] : await this.ops.due(t, open, this.paused);
      for (const r of ready) {
        if (this.controllers.size >= limit) break;
        const reg = this.handlers.get(r.kind)!;
        if (reg.running >= reg.opts.concurrency) continue;
        const lane = this.governedStart(reg);
        if (lane === null) continue;
        // Claim: only one worker moves it from queued to running (on PostgreSQL with a lease).
        this.starting.add(r.id);
        try {
          await this.claimAndRun({ tenant_id: r.tenant_id }, r.id, reg, lane, t);
        } finally {
          this.starting.delete(r.id);
        }
        if (this.stopping) break;
      }
      // A lane granted for ops that are no longer due goes back at once.
      this.returnHeldLanes();
      const next = await this.ops.nextDue();
      const poll = this.opts.pollMs ?? 1000;
      const wait = next ? Math.max(0, Date.parse(next) - Date.now()) : poll;
      // Due work still queued after this pass found no free slot: the end of a running op kicks the pump, so wait for
      // that (or the poll) instead of pumping again at once, which spun on two queries per tick through every backlog.
      if (!this.stopping) this.schedule(this.kickedMeanwhile ? 0 : wait === 0 ? poll : Math.min(wait, poll));
    } catch (e) {
      // A database held by another program or away: nothing was claimed that is not running; look again
      // shortly. Any other failure is logged and retried the same way: a pump that stops runs nothing more.
      if (!isBusy(e)) this.opts.log?.('ops: a pump pass failed', e);
      if (!this.stopping) this.schedule(BUSY_RETRY_MS);
    } finally {
      this.pumping = false;
    }
  }

  /** Claims one due op and starts it; a claim lost to another worker gives its lane back. */
  private async claimAndRun(tenant: TenantScope, id: string, reg: Registered, lane: Release, t: string): Promise<void> {
    const claimed = await this.ops.claim(tenant, id, this.instanceId, this.leased ? new Date(Date.now() + this.leaseMs).toISOString() : null, t);
    if (this.stopping) {
      // Stopped while the claim was on its way: the op goes back to the queue for the next start.
      lane();
      if (claimed) await this.giveBack(tenant, id, now()).catch(() => 0); // else re-queued at the next start (SQLite) or when its lease passes (PostgreSQL)
      return;
    }
    if (!claimed) return lane();
    try {
      await this.run(tenant, id, reg, lane);
    } catch (e) {
      // The database went away between the claim and the start: the op goes back once it answers.
      lane();
      this.orphans.set(id, tenant);
      throw e;
    }
  }

  private returnHeldLanes(): void {
    for (const lane of Object.values(this.lanes)) {
      lane.held?.();
      lane.held = null;
    }
  }

  /** The governor's word on starting an op of this kind: a lane to give back at its end, or null (wait). */
  private governedStart(reg: Registered): Release | null {
    const g = this.opts.governor;
    const none: Release = () => {};
    if (!g || !reg.opts.governed) return none;
    if (reg.opts.governed === 'inside') return g.paused ? null : none;
    const cls: UnitClass = reg.opts.governed === 'io' ? 'io' : 'cpu';
    const lane = this.lanes[cls];
    const held = lane.held ?? g.tryAcquire(cls);
    lane.held = null;
    if (held) return held;
    // Wait in the governor's line like every other unit (thumbnail lanes wait there too), so a long backfill
    // cannot keep scans and copies from ever starting; the grant comes back through a pump pass.
    if (!lane.asking) {
      lane.asking = true;
      g.acquire(this.laneStop.signal, cls).then(
        (r) => {
          lane.asking = false;
          if (this.stopping) return r();
          lane.held = r;
          this.kick();
        },
        () => (lane.asking = false),
      );
    }
    return null;
  }

  /** Starts a claimed op's handler (resolves once it is running; its outcome is recorded when it ends). */
  private async run(tenant: TenantScope, id: string, reg: Registered, lane: Release): Promise<void> {
    const row = (await this.ops.row(tenant, id))!;
    const ac = new AbortController();
    this.controllers.set(id, ac);
    reg.running++;
    let timeout: NodeJS.Timeout | undefined;
    if (reg.opts.timeoutMs)
      timeout = setTimeout(() => ac.abort(new AppError('timeout', { seconds: Math.round(reg.opts.timeoutMs! / 1000) })), reg.opts.timeoutMs);
    let lastWrite = 0;
    // Progress is written in order and before the outcome (a late hint must not land on a finished row).
    let written: Promise<void> = Promise.resolve();
    const notify = () => this.onChange({ id, tenant_id: tenant.tenant_id, owner_id: row.owner_id, visible: !!row.visible });
    const ctx: JobContext = {
      id,
      kind: row.kind,
      payload: JSON.parse(row.payload),
      tenant,
      attempt: row.attempts,
      ownerId: row.owner_id,
      signal: ac.signal,
      journal: this.journals.of(tenant, id),
      interrupted: () => this.stopping,
      progress: (fraction, bytes, message) => {
        const t = Date.now();
        if (t - lastWrite < PROGRESS_WRITE_MS && fraction < 1) return;
        lastWrite = t;
        written = written
          .then(() => this.ops.progress(tenant, id, Math.max(0, Math.min(1, fraction)), bytes?.done ?? null, bytes?.total ?? null, message ?? null))
          .then(notify, (e) => {
            // progress is a hint: the next report writes it
            if (!isBusy(e)) this.opts.log?.(`op ${id}: a progress write failed`, e);
          });
      },
    };
    if (row.cancel_requested) ac.abort(new AppError('cancelled'));
    notify();
    const p = (async () => {
      let outcome: () => Promise<void>;
      try {
        const result = await reg.handler(ctx);
        if (ac.signal.aborted) throw ac.signal.reason;
        outcome = () => this.finish(tenant, id, 'completed', { result });
      } catch (err) {
        outcome = () => this.fail(tenant, id, row, reg, err, ac.signal);
      }
      try {
        // A lost lease: the instance that took the op over records its outcome.
        if (this.lost.delete(id)) outcome = async () => {};
        await written;
        // The outcome of an op is never lost to a database held by another program: wait until it is free.
        await untilFree(outcome, Infinity);
      } catch (e) {
        this.opts.log?.(`op ${id} (${row.kind}): recording its outcome failed`, e);
      } finally {
        if (timeout) clearTimeout(timeout);
        this.controllers.delete(id);
        reg.running--;
        lane();
        notify();
        this.kick();
      }
    })();
    this.active.add(p);
    p.finally(() => this.active.delete(p));
  }

  private async fail(tenant: TenantScope, id: string, row: OpsTable, reg: Registered, err: unknown, signal: AbortSignal): Promise<void> {
    const app = isAppError(err) ? err : isAppError(signal.reason) && signal.aborted ? signal.reason : null;
    const cancelled = (app?.code === 'cancelled' && !this.stopping) || (await this.ops.cancelRequested(tenant, id));
    const dbAway = isBusy(err) && !this.stopping;
    if ((this.stopping || dbAway) && !cancelled) {
      // Interrupted by shutdown (resume on next boot), or the database went away under it (run again once it is
      // back: the journal skips finished steps): neither is the op's fault, so no attempt is spent.
      await this.giveBack(tenant, id, dbAway ? new Date(Date.now() + DB_AWAY_RETRY_MS).toISOString() : null);
      if (dbAway) this.opts.log?.(`op ${id} (${row.kind}): the database was away, runs again in ${DB_AWAY_RETRY_MS} ms`);
      return;
    }
    if (cancelled) return this.finish(tenant, id, 'cancelled', {});
    const attempts = row.attempts;
    const code = app?.code ?? 'internal';
    const text = err instanceof Error ? err.message : String(err);
    if (attempts < row.max_attempts) {
      const delay = Math.min(reg.opts.backoffMs * 2 ** (attempts - 1), 3_600_000);
      await this.ops.retryLater(tenant, id, this.instanceId, new Date(Date.now() + delay).toISOString(), code, app?.params ?? {}, text);
      this.opts.log?.(`op ${id} (${row.kind}) attempt ${attempts} failed, retry in ${delay} ms: ${text}`);
      return;
    }
    this.opts.log?.(`op ${id} (${row.kind}) failed: ${text}`, app ? undefined : err);
    await this.finish(tenant, id, 'failed', { code, params: app?.params ?? {}, text });
  }

  /**
   * Puts this instance's running op back in the queue without spending its attempt (it was not the op's
   * fault), due at `runAt` (null: its old `run_at`). Returns 1 when the row was ours to give back, else 0.
   */
  private giveBack(tenant: TenantScope, id: string, runAt: string | null): Promise<number> {
    return this.ops.giveBack(tenant, id, this.instanceId, runAt);
  }

  private async finish(
    tenant: TenantScope,
    id: string,
    status: OpStatus,
    o: { result?: unknown; code?: string; params?: Params; text?: string },
  ): Promise<void> {
    const changed = await this.ops.finish(tenant, id, this.instanceId, { status, ...o });
    // Not ours any more (taken over meanwhile): the journal belongs to the attempt that runs now.
    if (changed) await this.journals.clear(tenant, id);
  }

  /** Deletes finished ops older than `ms` (a cron keeps the table small). */
  prune(ms: number): Promise<number> {
    return this.ops.prune(new Date(Date.now() - ms).toISOString());
  }
}

/** An op whose state or progress changed: whose it is, for the frame to its owner in its tenant. */
export interface OpChange {
  id: string;
  tenant_id: number;
  owner_id: number | null;
  visible: boolean;
}
