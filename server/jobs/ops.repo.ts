/**
 * `ops`: the op queue's rows (the jobs module owns the table; `queue.ts`
 * holds the rules). Raw SQL, each statement prepared once: the pump runs
 * often. The pump's reads and its claim are on `db.async`, so a database on
 * another machine holds no other request meanwhile; the rest is synchronous
 * for now (its callers are: enqueue, cancel and the outcome of a run).
 * Writes that decide between instances are conditional statements: a claim
 * moves only a `queued` row (PostgreSQL: `FOR UPDATE SKIP LOCKED`), and every
 * outcome is written only while this instance holds the lease.
 */
import type { AsyncDb, Db, Sqlite } from '../db';
import type { OpsTable } from '../db/tables';

type Stmt = { run(...a: unknown[]): { changes: number }; get(...a: unknown[]): unknown; all(...a: unknown[]): unknown[] };
const now = () => new Date().toISOString();

/** A new op's row (`enqueue`). */
export interface NewOp {
  id: string;
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

export class OpsRepo {
  private statements = new Map<string, Stmt>();
  private sqlite: Sqlite;
  private async: AsyncDb;
  private postgres: boolean;
  /** The kinds a pump may claim arrive as one JSON array parameter. */
  private kindsIn: string;
  /** The API key that started an op, read from its payload's actor. */
  private keyIdOf: string;

  constructor(db: Db) {
    this.sqlite = db.sqlite;
    this.async = db.async;
    this.postgres = db.dialect === 'postgres';
    this.kindsIn = this.postgres ? 'SELECT json_array_elements_text(?::json)' : 'SELECT value FROM json_each(?)';
    this.keyIdOf = this.postgres ? "CAST(payload::json #>> '{actor,key_id}' AS BIGINT)" : "json_extract(payload, '$.actor.key_id')";
  }

  /** A prepared statement, compiled once per SQL text. */
  private q(sql: string): Stmt {
    let st = this.statements.get(sql);
    if (!st) this.statements.set(sql, (st = this.sqlite.prepare(sql)));
    return st;
  }

  /** The queued or running op holding this dedup key. */
  liveByDedup(key: string): string | undefined {
    return (this.q("SELECT id FROM ops WHERE dedup_key = ? AND status IN ('queued','running')").get(key) as { id: string } | undefined)?.id;
  }

  /** Whether the op holding this dedup key is queued or running; undefined when none is live. */
  liveStatusByDedup(key: string): 'queued' | 'running' | undefined {
    return (this.q("SELECT status FROM ops WHERE dedup_key = ? AND status IN ('queued','running')").get(key) as { status: 'queued' | 'running' } | undefined)
      ?.status;
  }

  /**
   * Inserts a queued op; false when another instance queued the same dedup key between the caller's read
   * and this insert (the unique index `ops_dedup` decides; its op is then the one).
   */
  insert(o: NewOp): boolean {
    const t = now();
    return (
      this.q(
        `INSERT INTO ops (id, kind, status, priority, payload, owner_id, visible, dedup_key, max_attempts, run_at, created_at, updated_at)
         VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ).run(o.id, o.kind, o.priority, o.payload, o.owner_id, o.visible ? 1 : 0, o.dedup_key, o.max_attempts, o.run_at, t, t).changes > 0
    );
  }

  /** SQLite's boot: this process is the database's only instance, so every running op was cut short. */
  requeueAllRunning(): void {
    this.q("UPDATE ops SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_at = ?, updated_at = ? WHERE status = 'running'").run(now(), now());
  }

  /** Re-queues running ops whose lease passed or that have none; how many. */
  requeueExpired(): number {
    const t = now();
    return this.q(
      "UPDATE ops SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_at = ?, updated_at = ? WHERE status = 'running' AND (lease_until IS NULL OR lease_until < ?)",
    ).run(t, t, t).changes;
  }

  /** Renews the leases `owner` still holds; the ops it holds, with their cancel flag. */
  renewLeases(owner: string, until: string): Array<{ id: string; cancel_requested: number }> {
    return this.q("UPDATE ops SET lease_until = ? WHERE lease_owner = ? AND status = 'running' RETURNING id, cancel_requested").all(until, owner) as Array<{
      id: string;
      cancel_requested: number;
    }>;
  }

  row(id: string): OpsTable | undefined {
    return this.q('SELECT * FROM ops WHERE id = ?').get(id) as OpsTable | undefined;
  }

  /** Cancels a queued op (a running one is left alone). */
  cancelQueued(id: string): void {
    this.q("UPDATE ops SET status = 'cancelled', finished_at = ?, updated_at = ? WHERE id = ? AND status = 'queued'").run(now(), now(), id);
  }

  /** Marks a running op cancelled for whichever instance runs it. */
  requestCancel(id: string): void {
    this.q('UPDATE ops SET cancel_requested = 1, updated_at = ? WHERE id = ?').run(now(), id);
  }

  cancelRequested(id: string): boolean {
    return (this.q('SELECT cancel_requested FROM ops WHERE id = ?').get(id) as { cancel_requested: number } | undefined)?.cancel_requested === 1;
  }

  /** Visible ops, newest first: all (ownerId null), one owner's, or those one API key of that owner started. */
  listVisible(ownerId: number | null, limit: number, keyId?: number): OpsTable[] {
    return (
      ownerId === null
        ? this.q('SELECT * FROM ops WHERE visible = 1 ORDER BY created_at DESC LIMIT ?').all(limit)
        : keyId !== undefined
          ? this.q(`SELECT * FROM ops WHERE visible = 1 AND owner_id = ? AND ${this.keyIdOf} = ? ORDER BY created_at DESC LIMIT ?`).all(ownerId, keyId, limit)
          : this.q('SELECT * FROM ops WHERE visible = 1 AND owner_id = ? ORDER BY created_at DESC LIMIT ?').all(ownerId, limit)
    ) as OpsTable[];
  }

  ownerOf(id: string): { owner_id: number | null; key_id: number | null } | undefined {
    return this.q(`SELECT owner_id, ${this.keyIdOf} AS key_id FROM ops WHERE id = ?`).get(id) as { owner_id: number | null; key_id: number | null } | undefined;
  }

  payloadOf(id: string): string | undefined {
    return (this.q('SELECT payload FROM ops WHERE id = ?').get(id) as { payload: string } | undefined)?.payload;
  }

  /** Queued and running ops per kind and status, across every instance. */
  depth(): Array<{ kind: string; status: 'queued' | 'running'; n: number }> {
    return this.q("SELECT kind, status, count(*) AS n FROM ops WHERE status IN ('queued','running') GROUP BY kind, status").all() as never;
  }

  /** Queued and running ops of these kinds, oldest first. */
  liveOfKinds(kinds: string[], limit: number): OpsTable[] {
    return this.q(`SELECT * FROM ops WHERE status IN ('queued','running') AND kind IN (${this.kindsIn}) ORDER BY created_at LIMIT ?`).all(
      JSON.stringify(kinds),
      limit,
    ) as OpsTable[];
  }

  /** Ops running or due by `soon`. */
  busy(soon: string): number {
    return Number((this.q("SELECT count(*) AS n FROM ops WHERE status = 'running' OR (status = 'queued' AND run_at <= ?)").get(soon) as { n: number }).n);
  }

  /** Up to 50 queued ops of these kinds due by `t`, the pump's order; `paused`: background ones (priority < 0) wait. */
  due(t: string, kinds: string[], paused: boolean): Promise<Array<{ id: string; kind: string; priority: number }>> {
    return this.async.sql(
      `SELECT id, kind, priority FROM ops WHERE status = 'queued' AND run_at <= ? AND kind IN (${this.kindsIn}) AND (? = 0 OR priority >= 0)
         ORDER BY priority DESC, run_at, created_at LIMIT 50`,
      [t, JSON.stringify(kinds), paused ? 1 : 0],
    );
  }

  /**
   * Moves a queued op to running for `owner`; false when another worker or instance had it. With `leaseUntil`
   * (PostgreSQL) a row another instance is claiming now is skipped, never waited for, and the claim carries a lease.
   */
  async claim(id: string, owner: string, leaseUntil: string | null, t: string): Promise<boolean> {
    const rows = leaseUntil
      ? await this.async.sql(
          `UPDATE ops SET status = 'running', lease_owner = ?, lease_until = ?, attempts = attempts + 1, started_at = COALESCE(started_at, ?), updated_at = ?
                 WHERE id = (SELECT id FROM ops WHERE id = ? AND status = 'queued' FOR UPDATE SKIP LOCKED) RETURNING id`,
          [owner, leaseUntil, t, t, id],
        )
      : await this.async.sql(
          "UPDATE ops SET status = 'running', lease_owner = ?, attempts = attempts + 1, started_at = COALESCE(started_at, ?), updated_at = ? WHERE id = ? AND status = 'queued' RETURNING id",
          [owner, t, t, id],
        );
    return rows.length > 0;
  }

  /** When the next queued op is due (null: none queued). */
  async nextDue(): Promise<string | null> {
    const [next] = await this.async.sql<{ t: string | null }>("SELECT min(run_at) AS t FROM ops WHERE status = 'queued'");
    return next?.t ?? null;
  }

  progress(id: string, fraction: number, done: number | null, total: number | null, message: string | null): void {
    this.q(
      'UPDATE ops SET progress = ?, bytes_done = COALESCE(?, bytes_done), bytes_total = COALESCE(?, bytes_total), message = COALESCE(?, message), updated_at = ? WHERE id = ?',
    ).run(fraction, done, total, message, now(), id);
  }

  /** A failed attempt: queued again at `runAt` with its error, if `owner` still holds it. */
  retryLater(id: string, owner: string, runAt: string, code: string, params: unknown, text: string): void {
    this.q(
      "UPDATE ops SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_at = ?, error_code = ?, error_params = ?, error_text = ?, updated_at = ? WHERE id = ? AND lease_owner = ?",
    ).run(runAt, code, JSON.stringify(params ?? {}), text, now(), id, owner);
  }

  /**
   * Puts a running op `owner` holds back in the queue without spending its attempt, due at `runAt` (null: its
   * old `run_at`). 1 when the row was ours to give back, else 0.
   */
  giveBack(id: string, owner: string, runAt: string | null): number {
    return this.q(
      "UPDATE ops SET status = 'queued', lease_owner = NULL, lease_until = NULL, run_at = COALESCE(?, run_at), attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, updated_at = ? WHERE id = ? AND status = 'running' AND lease_owner = ?",
    ).run(runAt, now(), id, owner).changes;
  }

  /** Records how an op ended, if `owner` still holds it; false when it was taken over meanwhile. */
  finish(id: string, owner: string, o: OpOutcome): boolean {
    return (
      this.q(
        `UPDATE ops SET status = ?, finished_at = ?, updated_at = ?, progress = CASE WHEN ? = 'completed' THEN 1 ELSE progress END,
         result = ?, error_code = ?, error_params = ?, error_text = ?, lease_until = NULL WHERE id = ? AND lease_owner = ?`,
      ).run(
        o.status,
        now(),
        now(),
        o.status,
        o.result === undefined ? null : JSON.stringify(o.result),
        o.code ?? null,
        o.params ? JSON.stringify(o.params) : null,
        o.text ?? null,
        id,
        owner,
      ).changes > 0
    );
  }

  /** Deletes finished ops that ended before `before`; how many. */
  prune(before: string): number {
    return this.q("DELETE FROM ops WHERE status IN ('completed','failed','cancelled') AND finished_at < ?").run(before).changes;
  }
}
