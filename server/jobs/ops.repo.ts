/**
 * `ops`: the op queue's rows (the jobs module owns the table; `queue.ts`
 * holds the rules). Raw SQL on `db.async` (on SQLite each text is prepared
 * once by the async face: the pump runs often), so a database on another
 * machine holds no other request meanwhile. Writes that decide between
 * callers or instances are one conditional statement or one unit: a claim
 * moves only a `queued` row (PostgreSQL: `FOR UPDATE SKIP LOCKED`), every
 * outcome is written only while this instance holds the lease, an enqueue
 * with a dedup key is one unit (`enqueueIn`), a cancel one unit of
 * conditional updates.
 *
 * Every op belongs to a tenant (docs/tenants.md): the person's for their work, the storage's for system work
 * on one, tenant 1's for the installation's own. A statement about one op names its tenant; the pump knows
 * it from `due` and `renewLeases`. The queue's own work over every tenant's rows (the pump's pick, the
 * boot's and the leases' re-queue, the metrics' depth, idleness, pruning) says so in its text with the SQL
 * comment `every tenant` (test/architecture/tenant-scope.test.ts accepts it in place of a `tenant_id` term), so
 * grep finds each statement that spans tenants on purpose.
 */
import type { AsyncDb, Db, Tx, Unit } from '../db';
import type { TenantScope } from '../db/tenant-tables';
import type { OpsTable } from '../db/tables';

const now = () => new Date().toISOString();
/** How many times an enqueue looks again when the live op it collided with ended meanwhile. */
const ENQUEUE_TRIES = 8;

/** A new op's row (`enqueue`). */
export interface NewOp {
  id: string;
  tenant_id: number;
  kind: string;
  priority: number;
  payload: string;
  owner_id: number | null;
  visible: boolean;
  dedup_key: string | null;
  max_attempts: number;
  run_at: string;
}

/** How an op ended, for `finish`. */
export interface OpOutcome {
  status: OpsTable['status'];
  result?: unknown;
  code?: string;
  params?: unknown;
  text?: string;
}

/** What a cancel found: the op's status before it, with what a change frame needs; undefined for an unknown id. */
export interface Cancelled {
  was: OpsTable['status'];
  owner_id: number | null;
  visible: boolean;
}

const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** PostgreSQL's int8 columns arrive as strings from the pool: a row as SQLite gives it. */
function toRow(r: Record<string, unknown>): OpsTable {
  return {
    ...(r as unknown as OpsTable),
    priority: num(r.priority),
    tenant_id: num(r.tenant_id),
    owner_id: numOrNull(r.owner_id),
    visible: num(r.visible),
    attempts: num(r.attempts),
    max_attempts: num(r.max_attempts),
    progress: num(r.progress),
    bytes_done: num(r.bytes_done),
    bytes_total: num(r.bytes_total),
    cancel_requested: num(r.cancel_requested),
  };
}

export class OpsRepo {
  private async: AsyncDb;
  private postgres: boolean;
  /** The kinds a pump may claim arrive as one JSON array parameter. */
  private kindsIn: string;
  /** The API key that started an op, read from its payload's actor. */
  private keyIdOf: string;

  constructor(db: Db) {
    this.async = db.async;
    this.postgres = db.dialect === 'postgres';
    this.kindsIn = this.postgres ? 'SELECT json_array_elements_text(?::json)' : 'SELECT value FROM json_each(?)';
    this.keyIdOf = this.postgres ? "CAST(payload::json #>> '{actor,key_id}' AS BIGINT)" : "json_extract(payload, '$.actor.key_id')";
  }

  /** Queues an op as one unit (`enqueueIn`): its id, or the live op's that absorbed it. */
  async enqueue(o: NewOp, behindRunning = false): Promise<{ id: string; inserted: boolean }> {
    return this.async.unit((t) => this.enqueueIn(t, o, behindRunning));
  }

  /** Queues several ops in one unit (one commit for a tick's copies), each as `enqueueIn`. */
  async enqueueAll(ops: Array<{ op: NewOp; behindRunning: boolean }>): Promise<Array<{ id: string; inserted: boolean }>> {
    const self = this;
    return this.async.unit(function* (t) {
      const out: Array<{ id: string; inserted: boolean }> = [];
      for (const o of ops) out.push(yield* self.enqueueIn(t, o.op, o.behindRunning));
      return out;
    });
  }

  /**
   * Inserts a queued op unless a live (queued or running) op holds its dedup key; then that op's id. With
   * `behindRunning`, only a queued op absorbs it: when the live one is running, the op goes under `<key>#next`.
   * The unique index `ops_dedup` (per tenant) decides: the insert is tried first (`ON CONFLICT DO NOTHING`, which waits for
   * a racing insert of the same key on PostgreSQL) and the live op is read only after a collision, so many
   * callers at once make one op under read committed too; a live op that ended between the two is retried.
   */
  *enqueueIn(t: Tx, o: NewOp, behindRunning = false): Unit<{ id: string; inserted: boolean }> {
    let key = o.dedup_key;
    for (let i = 0; i < ENQUEUE_TRIES; i++) {
      const stamp = now();
      const made = yield* t.sql(
        `INSERT INTO ops (id, tenant_id, kind, status, priority, payload, owner_id, visible, dedup_key, max_attempts, run_at, created_at, updated_at)
         VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
        [o.id, o.tenant_id, o.kind, o.priority, o.payload, o.owner_id, o.visible ? 1 : 0, key, o.max_attempts, o.run_at, stamp, stamp],
      );
      if (made.length > 0 || key === null) return { id: o.id, inserted: made.length > 0 };
      const [live] = yield* t.sql<{ id: string; status: 'queued' | 'running' }>(
        "SELECT id, status FROM ops WHERE tenant_id = ? AND dedup_key = ? AND status IN ('queued','running')",
        [o.tenant_id, key],
      );
      if (!live) continue;
      if (live.status === 'running' && behindRunning && key === o.dedup_key) {
        key = `${o.dedup_key}#next`;
        continue;
      }
      return { id: live.id, inserted: false };
    }
    throw new Error(`ops: could not queue under dedup key ${o.dedup_key}`);
  }

  /** The tenant's queued or running op holding this dedup key, or undefined. */
  async liveByDedup(s: TenantScope, key: string): Promise<string | undefined> {
    const [r] = await this.async.sql<{ id: string }>("SELECT id FROM ops WHERE tenant_id = ? AND dedup_key = ? AND status IN ('queued','running')", [
      s.tenant_id,
      key,
    ]);
    return r?.id;
  }

  /** A boot with no other server on the database (always on SQLite): every running op was cut short. */
  async requeueAllRunning(): Promise<void> {
    await this.async.sql(
      "UPDATE ops /* every tenant */ SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_at = ?, updated_at = ? WHERE status = 'running'",
      [now(), now()],
    );
  }

  /** Re-queues running ops whose lease passed or that have none; how many. */
  async requeueExpired(): Promise<number> {
    const t = now();
    const rows = await this.async.sql(
      "UPDATE ops /* every tenant */ SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_at = ?, updated_at = ? WHERE status = 'running' AND (lease_until IS NULL OR lease_until < ?) RETURNING id",
      [t, t, t],
    );
    return rows.length;
  }

  /** Renews the leases `owner` (this instance) still holds, in every tenant; the ops it holds, with their tenant and cancel flag. */
  async renewLeases(owner: string, until: string): Promise<Array<{ id: string; tenant_id: number; cancel_requested: number }>> {
    const rows = await this.async.sql<{ id: string; tenant_id: unknown; cancel_requested: unknown }>(
      "UPDATE ops /* every tenant */ SET lease_until = ? WHERE lease_owner = ? AND status = 'running' RETURNING id, tenant_id, cancel_requested",
      [until, owner],
    );
    return rows.map((r) => ({ id: r.id, tenant_id: num(r.tenant_id), cancel_requested: num(r.cancel_requested) }));
  }

  /** The tenant's op, or undefined for an unknown id (or another tenant's). */
  async row(s: TenantScope, id: string): Promise<OpsTable | undefined> {
    const [r] = await this.async.sql<Record<string, unknown>>('SELECT * FROM ops WHERE tenant_id = ? AND id = ?', [s.tenant_id, id]);
    return r && toRow(r);
  }

  /**
   * Cancels a queued op, or flags a running one for whichever instance runs it; a finished op is left alone.
   * One unit of conditional updates, so a claim racing the cancel either loses to it or sees the flag.
   * Another tenant's op is left alone and answers undefined, like an unknown id.
   */
  async cancel(s: TenantScope, id: string): Promise<Cancelled | undefined> {
    return this.async.unit(function* (t) {
      const at = now();
      type R = { owner_id: unknown; visible: unknown; status: OpsTable['status'] };
      const pick = (r: R, was: OpsTable['status']): Cancelled => ({ was, owner_id: numOrNull(r.owner_id), visible: num(r.visible) === 1 });
      const [queued] = yield* t.sql<R>(
        "UPDATE ops SET status = 'cancelled', finished_at = ?, updated_at = ? WHERE tenant_id = ? AND id = ? AND status = 'queued' RETURNING owner_id, visible, status",
        [at, at, s.tenant_id, id],
      );
      if (queued) return pick(queued, 'queued');
      const [running] = yield* t.sql<R>(
        "UPDATE ops SET cancel_requested = 1, updated_at = ? WHERE tenant_id = ? AND id = ? AND status = 'running' RETURNING owner_id, visible, status",
        [at, s.tenant_id, id],
      );
      if (running) return pick(running, 'running');
      const [other] = yield* t.sql<R>('SELECT owner_id, visible, status FROM ops WHERE tenant_id = ? AND id = ?', [s.tenant_id, id]);
      return other && pick(other, other.status);
    });
  }

  async cancelRequested(s: TenantScope, id: string): Promise<boolean> {
    const [r] = await this.async.sql<{ cancel_requested: unknown }>('SELECT cancel_requested FROM ops WHERE tenant_id = ? AND id = ?', [s.tenant_id, id]);
    return r !== undefined && num(r.cancel_requested) === 1;
  }

  /** The tenant's visible ops, newest first: all (ownerId null), one owner's, or those one API key of that owner started. */
  async listVisible(s: TenantScope, ownerId: number | null, limit: number, keyId?: number): Promise<OpsTable[]> {
    const rows =
      ownerId === null
        ? await this.async.sql<Record<string, unknown>>('SELECT * FROM ops WHERE tenant_id = ? AND visible = 1 ORDER BY created_at DESC LIMIT ?', [
            s.tenant_id,
            limit,
          ])
        : keyId !== undefined
          ? await this.async.sql<Record<string, unknown>>(
              `SELECT * FROM ops WHERE tenant_id = ? AND visible = 1 AND owner_id = ? AND ${this.keyIdOf} = ? ORDER BY created_at DESC LIMIT ?`,
              [s.tenant_id, ownerId, keyId, limit],
            )
          : await this.async.sql<Record<string, unknown>>(
              'SELECT * FROM ops WHERE tenant_id = ? AND visible = 1 AND owner_id = ? ORDER BY created_at DESC LIMIT ?',
              [s.tenant_id, ownerId, limit],
            );
    return rows.map(toRow);
  }

  /** The owner of the tenant's op and the key that started it, or undefined for an unknown id (or another tenant's). */
  async ownerOf(s: TenantScope, id: string): Promise<{ owner_id: number | null; key_id: number | null } | undefined> {
    const [r] = await this.async.sql<{ owner_id: unknown; key_id: unknown }>(
      `SELECT owner_id, ${this.keyIdOf} AS key_id FROM ops WHERE tenant_id = ? AND id = ?`,
      [s.tenant_id, id],
    );
    return r && { owner_id: numOrNull(r.owner_id), key_id: numOrNull(r.key_id) };
  }

  /** The tenant's op's payload, or undefined for an unknown id (or another tenant's). */
  async payloadOf(s: TenantScope, id: string): Promise<string | undefined> {
    const [r] = await this.async.sql<{ payload: string }>('SELECT payload FROM ops WHERE tenant_id = ? AND id = ?', [s.tenant_id, id]);
    return r?.payload;
  }

  /** Queued and running ops per kind and status, across every instance and tenant (the installation's metrics). */
  async depth(): Promise<Array<{ kind: string; status: 'queued' | 'running'; n: number }>> {
    const rows = await this.async.sql<{ kind: string; status: 'queued' | 'running'; n: unknown }>(
      "SELECT kind, status, count(*) AS n FROM ops /* every tenant */ WHERE status IN ('queued','running') GROUP BY kind, status",
    );
    return rows.map((r) => ({ kind: r.kind, status: r.status, n: num(r.n) }));
  }

  /** Queued and running ops of these kinds in every tenant, oldest first (the installation's host keeps awake for them). */
  async liveOfKinds(kinds: string[], limit: number): Promise<OpsTable[]> {
    const rows = await this.async.sql<Record<string, unknown>>(
      `SELECT * FROM ops /* every tenant */ WHERE status IN ('queued','running') AND kind IN (${this.kindsIn}) ORDER BY created_at LIMIT ?`,
      [JSON.stringify(kinds), limit],
    );
    return rows.map(toRow);
  }

  /** Ops running or due by `soon`, in every tenant. */
  async busy(soon: string): Promise<number> {
    const [r] = await this.async.sql<{ n: unknown }>(
      "SELECT count(*) AS n FROM ops /* every tenant */ WHERE status = 'running' OR (status = 'queued' AND run_at <= ?)",
      [soon],
    );
    return num(r!.n);
  }

  /**
   * Up to 50 queued ops of these kinds due by `t` in every tenant, with their tenant, in the pump's order;
   * `paused`: background ones (priority < 0) wait.
   */
  async due(t: string, kinds: string[], paused: boolean): Promise<Array<{ id: string; tenant_id: number; kind: string; priority: number }>> {
    const rows = await this.async.sql<{ id: string; tenant_id: unknown; kind: string; priority: unknown }>(
      `SELECT id, tenant_id, kind, priority FROM ops /* every tenant */ WHERE status = 'queued' AND run_at <= ? AND kind IN (${this.kindsIn}) AND (? = 0 OR priority >= 0)
         ORDER BY priority DESC, run_at, created_at LIMIT 50`,
      [t, JSON.stringify(kinds), paused ? 1 : 0],
    );
    return rows.map((r) => ({ id: r.id, tenant_id: num(r.tenant_id), kind: r.kind, priority: num(r.priority) }));
  }

  /**
   * Moves a queued op to running for `owner`; false when another worker or instance had it. With `leaseUntil`
   * (PostgreSQL) a row another instance is claiming now is skipped, never waited for, and the claim carries a lease.
   */
  async claim(s: TenantScope, id: string, owner: string, leaseUntil: string | null, t: string): Promise<boolean> {
    const rows = leaseUntil
      ? await this.async.sql(
          `UPDATE ops SET status = 'running', lease_owner = ?, lease_until = ?, attempts = attempts + 1, started_at = COALESCE(started_at, ?), updated_at = ?
                 WHERE tenant_id = ? AND id = (SELECT id FROM ops WHERE tenant_id = ? AND id = ? AND status = 'queued' FOR UPDATE SKIP LOCKED) RETURNING id`,
          [owner, leaseUntil, t, t, s.tenant_id, s.tenant_id, id],
        )
      : await this.async.sql(
          "UPDATE ops SET status = 'running', lease_owner = ?, attempts = attempts + 1, started_at = COALESCE(started_at, ?), updated_at = ? WHERE tenant_id = ? AND id = ? AND status = 'queued' RETURNING id",
          [owner, t, t, s.tenant_id, id],
        );
    return rows.length > 0;
  }

  /** When the next queued op of any tenant is due (null: none queued). */
  async nextDue(): Promise<string | null> {
    const [next] = await this.async.sql<{ t: string | null }>("SELECT min(run_at) AS t FROM ops /* every tenant */ WHERE status = 'queued'");
    return next?.t ?? null;
  }

  /** A progress hint (the caller skips it when the database is busy). */
  async progress(s: TenantScope, id: string, fraction: number, done: number | null, total: number | null, message: string | null): Promise<void> {
    await this.async.sql(
      'UPDATE ops SET progress = ?, bytes_done = COALESCE(?, bytes_done), bytes_total = COALESCE(?, bytes_total), message = COALESCE(?, message), updated_at = ? WHERE tenant_id = ? AND id = ?',
      [fraction, done, total, message, now(), s.tenant_id, id],
    );
  }

  /** A failed attempt: queued again at `runAt` with its error, if `owner` still holds it. */
  async retryLater(s: TenantScope, id: string, owner: string, runAt: string, code: string, params: unknown, text: string): Promise<void> {
    await this.async.sql(
      "UPDATE ops SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_at = ?, error_code = ?, error_params = ?, error_text = ?, updated_at = ? WHERE tenant_id = ? AND id = ? AND lease_owner = ?",
      [runAt, code, JSON.stringify(params ?? {}), text, now(), s.tenant_id, id, owner],
    );
  }

  /**
   * Puts a running op `owner` holds back in the queue without spending its attempt, due at `runAt` (null: its
   * old `run_at`). 1 when the row was ours to give back, else 0.
   */
  async giveBack(s: TenantScope, id: string, owner: string, runAt: string | null): Promise<number> {
    const rows = await this.async.sql(
      "UPDATE ops SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_at = COALESCE(?, run_at), attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, updated_at = ? WHERE tenant_id = ? AND id = ? AND status = 'running' AND lease_owner = ? RETURNING id",
      [runAt, now(), s.tenant_id, id, owner],
    );
    return rows.length;
  }

  /** Records how an op ended, if `owner` still holds it; false when it was taken over meanwhile. */
  async finish(s: TenantScope, id: string, owner: string, o: OpOutcome): Promise<boolean> {
    const rows = await this.async.sql(
      `UPDATE ops SET status = ?, finished_at = ?, updated_at = ?, progress = CASE WHEN ? = 'completed' THEN 1 ELSE progress END,
         result = ?, error_code = ?, error_params = ?, error_text = ?, lease_until = NULL WHERE tenant_id = ? AND id = ? AND lease_owner = ? RETURNING id`,
      [
        o.status,
        now(),
        now(),
        o.status,
        o.result === undefined ? null : JSON.stringify(o.result),
        o.code ?? null,
        o.params ? JSON.stringify(o.params) : null,
        o.text ?? null,
        s.tenant_id,
        id,
        owner,
      ],
    );
    return rows.length > 0;
  }

  /** Whether an op of any tenant with this id is queued or running (system work that knows an op by its id alone). */
  async liveInAnyTenant(id: string): Promise<boolean> {
    return (await this.async.sql("SELECT 1 FROM ops /* every tenant */ WHERE id = ? AND status IN ('queued','running')", [id])).length > 0;
  }

  /** Deletes every tenant's finished ops that ended before `before`; how many. */
  async prune(before: string): Promise<number> {
    const rows = await this.async.sql(
      "DELETE FROM ops /* every tenant */ WHERE status IN ('completed','failed','cancelled') AND finished_at < ? RETURNING id",
      [before],
    );
    return rows.length;
  }
}
