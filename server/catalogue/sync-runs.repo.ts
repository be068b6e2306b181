/**
 * `sync_runs` and `sync_errors`: the record of full syncs (the catalogue owns
 * both tables). Queueing a run is one serializable unit, so two callers at
 * once (a poll timer and "Sync now", or two instances) share one live run.
 * The sync engine's own statements (its errors while it walks, the tombstone
 * guard) are single statements it awaits between its batches.
 */
import type { Db, TenantScope } from '../db';
import type { SyncRun, SyncRunDetail } from '../contract';
import type { StorageRef } from './storage-ref';

type RunRow = Omit<SyncRun, 'guard_tripped'> & { guard_tripped: number | boolean };

export interface RunCounts {
  added: number;
  updated: number;
  removed: number;
  errors: number;
  seen: number;
}

/** A run as the statements about it take it: its id and its storage's tenant. */
export interface RunRef extends TenantScope {
  id: number;
}

const view = (r: RunRow): SyncRun => ({ ...r, guard_tripped: !!r.guard_tripped });

/** A run's columns (not `selectAll`: the row also holds `tenant_id`, which no answer shows). */
const COLUMNS = [
  'id',
  'storage_id',
  'kind',
  'status',
  'started_at',
  'finished_at',
  'added',
  'updated',
  'removed',
  'errors',
  'seen',
  'guard_tripped',
  'message',
] as const;

/**
 * Runs and their errors carry their storage's tenant (docs/tenants.md, principle 2): the engine and the syncer
 * pass the storage row they work on, the admin routes the caller's scope.
 */
export class SyncRunsRepo {
  constructor(private db: Db) {}

  private activeQuery(s: StorageRef) {
    return this.db.k
      .selectFrom('sync_runs')
      .select('id')
      .where('tenant_id', '=', s.tenant_id)
      .where('storage_id', '=', s.id)
      .where('status', 'in', ['queued', 'running'])
      .orderBy('id', 'desc')
      .limit(1);
  }

  /** The storage's queued or running run, if any. */
  async active(s: StorageRef): Promise<number | null> {
    return (await this.db.async.first(this.activeQuery(s)))?.id ?? null;
  }

  /** Queues a full run unless one is live: the run's id, and whether this call made it. */
  queue(s: StorageRef): Promise<{ id: number; made: boolean }> {
    const active = this.activeQuery(s);
    const insert = this.db.k
      .insertInto('sync_runs')
      .values({ tenant_id: s.tenant_id, storage_id: s.id, kind: 'full', status: 'queued', started_at: new Date().toISOString() })
      .returning('id');
    return this.db.async.unit(
      function* (t) {
        const live = yield* t.first(active);
        if (live) return { id: live.id, made: false };
        return { id: (yield* t.first(insert))!.id, made: true };
      },
      { isolation: 'serializable' },
    );
  }

  /** The tenant's runs, newest first, optionally of one storage. */
  async list(scope: TenantScope, q: { storage_id?: number; limit: number; offset: number }): Promise<SyncRun[]> {
    let sel = this.db.k.selectFrom('sync_runs').select(COLUMNS).where('tenant_id', '=', scope.tenant_id);
    if (q.storage_id) sel = sel.where('storage_id', '=', q.storage_id);
    const rows = (await this.db.async.all(sel.orderBy('id', 'desc').limit(q.limit).offset(q.offset))) as RunRow[];
    return rows.map(view);
  }

  /** One run of the tenant with its first 1,000 errors. */
  detail(scope: TenantScope, id: number): Promise<SyncRunDetail | null> {
    const run = this.db.k.selectFrom('sync_runs').select(COLUMNS).where('tenant_id', '=', scope.tenant_id).where('id', '=', id);
    const errors = this.db.k
      .selectFrom('sync_errors')
      .select(['path', 'code', 'message'])
      .where('tenant_id', '=', scope.tenant_id)
      .where('run_id', '=', id)
      .orderBy('id')
      .limit(1000);
    return this.db.async.read(function* (t) {
      const r = (yield* t.first(run)) as RunRow | undefined;
      return r ? { ...view(r), error_details: yield* t.all(errors) } : null;
    });
  }

  /** The newest full run of the storage started after `since` (ISO), if any. */
  async lastFullSince(s: StorageRef, since: string): Promise<number | null> {
    const q = this.db.k
      .selectFrom('sync_runs')
      .select('id')
      .where('tenant_id', '=', s.tenant_id)
      .where('storage_id', '=', s.id)
      .where('kind', '=', 'full')
      .where('started_at', '>', since)
      .orderBy('id', 'desc')
      .limit(1);
    return (await this.db.async.first(q))?.id ?? null;
  }

  async start(run: RunRef): Promise<void> {
    await this.db.async.run(
      this.db.k
        .updateTable('sync_runs')
        .set({ status: 'running', started_at: new Date().toISOString() })
        .where('tenant_id', '=', run.tenant_id)
        .where('id', '=', run.id),
    );
  }

  /** Ends a run with its counts; a message recorded earlier (the tombstone guard's) is kept. */
  async finish(run: RunRef, status: 'completed' | 'failed', c: RunCounts, message: string | null): Promise<void> {
    await this.db.async.run(
      this.db.k
        .updateTable('sync_runs')
        .set((eb) => ({
          status,
          finished_at: new Date().toISOString(),
          added: c.added,
          updated: c.updated,
          removed: c.removed,
          errors: c.errors,
          seen: c.seen,
          message: eb.fn.coalesce('message', eb.val(message)),
        }))
        .where('tenant_id', '=', run.tenant_id)
        .where('id', '=', run.id),
    );
  }

  /**
   * A failed run's cause, unless the walk recorded errors of its own; how many errors the run has now.
   * A storage deleted while it synced took its runs along: nothing to record then.
   */
  failure(run: RunRef, code: string, reason: string): Promise<number> {
    const row = this.db.k.selectFrom('sync_runs').select('id').where('tenant_id', '=', run.tenant_id).where('id', '=', run.id);
    const count = this.db.k
      .selectFrom('sync_errors')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', run.tenant_id)
      .where('run_id', '=', run.id);
    const insert = this.db.k.insertInto('sync_errors').values({ tenant_id: run.tenant_id, run_id: run.id, path: '', code, message: reason.slice(0, 2000) });
    return this.db.async.unit(function* (t) {
      if (!(yield* t.first(row))) return 0;
      const n = Number((yield* t.first(count))!.n);
      if (n > 0) return n;
      yield* t.run(insert);
      return 1;
    });
  }

  /** The engine, while it walks: one folder or the whole run failed. */
  async recordError(run: RunRef, path: string, code: string, reason: string): Promise<void> {
    await this.db.async.sql('INSERT INTO sync_errors (tenant_id, run_id, path, code, message) VALUES (?, ?, ?, ?, ?)', [
      run.tenant_id,
      run.id,
      path,
      code,
      reason.slice(0, 2000),
    ]);
  }

  /** The engine: entries its storage's last completed full run saw. */
  async lastSeen(s: StorageRef): Promise<number | undefined> {
    const [r] = await this.db.async.sql<{ seen: number | string | null }>(
      "SELECT seen FROM sync_runs WHERE tenant_id = ? AND storage_id = ? AND kind = 'full' AND status = 'completed' ORDER BY id DESC LIMIT 1",
      [s.tenant_id, s.id],
    );
    return r?.seen == null ? undefined : Number(r.seen);
  }

  /** The engine: the tombstone guard skipped the delete pass, and why. */
  async tripGuard(run: RunRef, message: string): Promise<void> {
    await this.db.async.sql('UPDATE sync_runs SET guard_tripped = 1, message = ? WHERE tenant_id = ? AND id = ?', [message, run.tenant_id, run.id]);
  }
}
