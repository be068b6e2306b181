/**
 * `sync_runs` and `sync_errors`: the record of full syncs (the catalogue owns
 * both tables). Queueing a run is one serializable unit, so two callers at
 * once (a poll timer and "Sync now", or two instances) share one live run.
 * The sync engine's own statements (its errors while it walks, the tombstone
 * guard) are single statements it awaits between its batches.
 */
import type { Db } from '../db';
import type { SyncRun, SyncRunDetail } from '../contract';

type RunRow = Omit<SyncRun, 'guard_tripped'> & { guard_tripped: number | boolean };

export interface RunCounts {
  added: number;
  updated: number;
  removed: number;
  errors: number;
  seen: number;
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

export class SyncRunsRepo {
  constructor(private db: Db) {}

  private activeQuery(storageId: number) {
    return this.db.k
      .selectFrom('sync_runs')
      .select('id')
      .where('storage_id', '=', storageId)
      .where('status', 'in', ['queued', 'running'])
      .orderBy('id', 'desc')
      .limit(1);
  }

  /** The storage's queued or running run, if any. */
  async active(storageId: number): Promise<number | null> {
    return (await this.db.async.first(this.activeQuery(storageId)))?.id ?? null;
  }

  /** Queues a full run unless one is live: the run's id, and whether this call made it. */
  queue(storageId: number): Promise<{ id: number; made: boolean }> {
    const active = this.activeQuery(storageId);
    const insert = this.db.k
      .insertInto('sync_runs')
      .values({ storage_id: storageId, kind: 'full', status: 'queued', started_at: new Date().toISOString() })
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

  /** Newest first, optionally of one storage. */
  async list(q: { storage_id?: number; limit: number; offset: number }): Promise<SyncRun[]> {
    let sel = this.db.k.selectFrom('sync_runs').select(COLUMNS);
    if (q.storage_id) sel = sel.where('storage_id', '=', q.storage_id);
    const rows = (await this.db.async.all(sel.orderBy('id', 'desc').limit(q.limit).offset(q.offset))) as RunRow[];
    return rows.map(view);
  }

  /** One run with its first 1,000 errors. */
  detail(id: number): Promise<SyncRunDetail | null> {
    const run = this.db.k.selectFrom('sync_runs').select(COLUMNS).where('id', '=', id);
    const errors = this.db.k.selectFrom('sync_errors').select(['path', 'code', 'message']).where('run_id', '=', id).orderBy('id').limit(1000);
    return this.db.async.read(function* (t) {
      const r = (yield* t.first(run)) as RunRow | undefined;
      return r ? { ...view(r), error_details: yield* t.all(errors) } : null;
    });
  }

  /** The newest full run of the storage started after `since` (ISO), if any. */
  async lastFullSince(storageId: number, since: string): Promise<number | null> {
    const q = this.db.k
      .selectFrom('sync_runs')
      .select('id')
      .where('storage_id', '=', storageId)
      .where('kind', '=', 'full')
      .where('started_at', '>', since)
      .orderBy('id', 'desc')
      .limit(1);
    return (await this.db.async.first(q))?.id ?? null;
  }

  async start(runId: number): Promise<void> {
    await this.db.async.run(this.db.k.updateTable('sync_runs').set({ status: 'running', started_at: new Date().toISOString() }).where('id', '=', runId));
  }

  /** Ends a run with its counts; a message recorded earlier (the tombstone guard's) is kept. */
  async finish(runId: number, status: 'completed' | 'failed', c: RunCounts, message: string | null): Promise<void> {
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
        .where('id', '=', runId),
    );
  }

  /**
   * A failed run's cause, unless the walk recorded errors of its own; how many errors the run has now.
   * A storage deleted while it synced took its runs along: nothing to record then.
   */
  failure(runId: number, code: string, reason: string): Promise<number> {
    const run = this.db.k.selectFrom('sync_runs').select('id').where('id', '=', runId);
    const count = this.db.k
      .selectFrom('sync_errors')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('run_id', '=', runId);
    const insert = this.db.k.insertInto('sync_errors').values({ run_id: runId, path: '', code, message: reason.slice(0, 2000) });
    return this.db.async.unit(function* (t) {
      if (!(yield* t.first(run))) return 0;
      const n = Number((yield* t.first(count))!.n);
      if (n > 0) return n;
      yield* t.run(insert);
      return 1;
    });
  }

  /** The engine, while it walks: one folder or the whole run failed. */
  async recordError(runId: number, path: string, code: string, reason: string): Promise<void> {
    await this.db.async.sql('INSERT INTO sync_errors (run_id, path, code, message) VALUES (?, ?, ?, ?)', [runId, path, code, reason.slice(0, 2000)]);
  }

  /** The engine: entries its storage's last completed full run saw. */
  async lastSeen(storageId: number): Promise<number | undefined> {
    const [r] = await this.db.async.sql<{ seen: number | string | null }>(
      "SELECT seen FROM sync_runs WHERE storage_id = ? AND kind = 'full' AND status = 'completed' ORDER BY id DESC LIMIT 1",
      [storageId],
    );
    return r?.seen == null ? undefined : Number(r.seen);
  }

  /** The engine: the tombstone guard skipped the delete pass, and why. */
  async tripGuard(runId: number, message: string): Promise<void> {
    await this.db.async.sql('UPDATE sync_runs SET guard_tripped = 1, message = ? WHERE id = ?', [message, runId]);
  }
}
