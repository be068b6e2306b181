/** The replication tables (owner: replication): targets, rules, the failure log and the report row. */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db';
import type { FailureCode, ReplicaMode, ReplicaOp, TargetMode } from './types';

export interface TargetRow {
  id: number;
  uid: string;
  name: string;
  driver: string;
  config: string;
  mode: TargetMode;
  enabled: number;
  created_at: string;
  updated_at: string;
}
export interface RuleRow {
  id: number;
  path_pattern: string;
  mode: ReplicaMode;
  priority: number;
  enabled: number;
  description: string | null;
  created_at: string;
  updated_at: string;
}
export interface FailureRow {
  id: number;
  storage_id: number;
  rel: string;
  op: ReplicaOp;
  to_rel: string | null;
  /** Where the copy reads on the primary when not at `rel` (an append_only file moved away); null = `rel`. */
  from_rel: string | null;
  code: FailureCode;
  message: string;
  attempts: number;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
}
export interface ReportRow {
  id: 1;
  ran_at: string;
  unresolved: number;
  repaired_24h: number;
  actionable: number;
  body: string;
}

const now = () => new Date().toISOString();
type Stmt = {
  run(...a: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...a: unknown[]): unknown;
  all(...a: unknown[]): unknown[];
};
export const newTargetUid = (): string => 'rt' + randomBytes(8).toString('hex');

export class ReplicationRepo {
  constructor(private db: Db) {}

  private get s() {
    return this.db.sqlite;
  }

  private statements = new Map<string, Stmt>();
  /** A statement compiled once per SQL text: a change on a linked storage runs several of them per write. */
  private q(sql: string): Stmt {
    let st = this.statements.get(sql);
    if (!st) this.statements.set(sql, (st = this.s.prepare(sql) as unknown as Stmt));
    return st;
  }

  // Targets
  targets(): TargetRow[] {
    return this.q('SELECT * FROM replica_targets ORDER BY id').all() as TargetRow[];
  }
  target(id: number): TargetRow | undefined {
    return this.q('SELECT * FROM replica_targets WHERE id = ?').get(id) as TargetRow | undefined;
  }
  targetNameTaken(name: string, exceptId = -1): boolean {
    return !!this.q('SELECT 1 FROM replica_targets WHERE name = ? AND id != ?').get(name, exceptId);
  }
  insertTarget(r: Pick<TargetRow, 'uid' | 'name' | 'driver' | 'config' | 'mode' | 'enabled'>): number {
    const t = now();
    return Number(this.q('INSERT INTO replica_targets (uid, name, driver, config, mode, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(r.uid, r.name, r.driver, r.config, r.mode, r.enabled, t, t).lastInsertRowid);
  }
  patchTarget(id: number, p: Partial<Pick<TargetRow, 'name' | 'driver' | 'config' | 'mode' | 'enabled'>>): void {
    const keys = Object.keys(p);
    if (!keys.length) return;
    this.q(`UPDATE replica_targets SET ${keys.map((k) => `${k} = @${k}`).join(', ')}, updated_at = @updated_at WHERE id = @id`).run({ ...p, id, updated_at: now() });
  }
  deleteTarget(id: number): void {
    this.q('DELETE FROM replica_targets WHERE id = ?').run(id);
  }

  // Rules
  rules(): RuleRow[] {
    return this.q('SELECT * FROM replica_rules ORDER BY priority, id').all() as RuleRow[];
  }
  rule(id: number): RuleRow | undefined {
    return this.q('SELECT * FROM replica_rules WHERE id = ?').get(id) as RuleRow | undefined;
  }
  insertRule(r: Pick<RuleRow, 'path_pattern' | 'mode' | 'priority' | 'enabled' | 'description'>): number {
    const t = now();
    return Number(this.q('INSERT INTO replica_rules (path_pattern, mode, priority, enabled, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(r.path_pattern, r.mode, r.priority, r.enabled, r.description, t, t).lastInsertRowid);
  }
  patchRule(id: number, p: Partial<Pick<RuleRow, 'path_pattern' | 'mode' | 'priority' | 'enabled' | 'description'>>): void {
    const keys = Object.keys(p);
    if (!keys.length) return;
    this.q(`UPDATE replica_rules SET ${keys.map((k) => `${k} = @${k}`).join(', ')}, updated_at = @updated_at WHERE id = @id`).run({ ...p, id, updated_at: now() });
  }
  deleteRule(id: number): boolean {
    return this.q('DELETE FROM replica_rules WHERE id = ?').run(id).changes > 0;
  }

  // Failures
  /**
   * Records a failure of (storage, rel, op): a new row, or the same row again
   * with its attempt count raised and `resolved_at` cleared. Returns the row
   * and whether it was (re)opened by this call (it was not unresolved before).
   */
  recordFailure(f: { storage_id: number; rel: string; op: ReplicaOp; to_rel: string | null; from_rel: string | null; code: FailureCode; message: string }): { row: FailureRow; opened: boolean } {
    return this.s.transaction(() => {
      const before = this.q('SELECT resolved_at FROM replica_failures WHERE storage_id = ? AND rel = ? AND op = ?').get(f.storage_id, f.rel, f.op) as { resolved_at: string | null } | undefined;
      const t = now();
      const row = this.q(`INSERT INTO replica_failures (storage_id, rel, op, to_rel, from_rel, code, message, attempts, created_at, updated_at)
          VALUES (@storage_id, @rel, @op, @to_rel, @from_rel, @code, @message, 1, @t, @t)
          ON CONFLICT (storage_id, rel, op) DO UPDATE SET attempts = replica_failures.attempts + 1, code = excluded.code, message = excluded.message,
            to_rel = excluded.to_rel, from_rel = excluded.from_rel, updated_at = excluded.updated_at, resolved_at = NULL,
            created_at = CASE WHEN replica_failures.resolved_at IS NULL THEN replica_failures.created_at ELSE excluded.created_at END
          RETURNING *`).get({ ...f, message: f.message.slice(0, 2000), t }) as FailureRow;
      return { row, opened: !before || before.resolved_at !== null };
    })();
  }
  /** Marks the unresolved failure of (storage, rel, op) resolved; false when there was none. */
  resolve(storageId: number, rel: string, op: ReplicaOp): boolean {
    return this.q('UPDATE replica_failures SET resolved_at = ?, updated_at = ? WHERE storage_id = ? AND rel = ? AND op = ? AND resolved_at IS NULL').run(now(), now(), storageId, rel, op).changes > 0;
  }
  /** Forgets the failure of (storage, rel, op): its storage has no target to repair against any more. */
  dropFailure(storageId: number, rel: string, op: ReplicaOp): void {
    this.q('DELETE FROM replica_failures WHERE storage_id = ? AND rel = ? AND op = ?').run(storageId, rel, op);
  }
  /** Forgets every failure of the storages linked to target `targetId` (the target is being deleted). */
  dropFailuresOfTarget(targetId: number): number {
    return this.q('DELETE FROM replica_failures WHERE storage_id IN (SELECT id FROM storages WHERE replica_target_id = ?)').run(targetId).changes;
  }
  failure(id: number): FailureRow | undefined {
    return this.q('SELECT * FROM replica_failures WHERE id = ?').get(id) as FailureRow | undefined;
  }
  failureByKey(storageId: number, rel: string, op: ReplicaOp): FailureRow | undefined {
    return this.q('SELECT * FROM replica_failures WHERE storage_id = ? AND rel = ? AND op = ?').get(storageId, rel, op) as FailureRow | undefined;
  }
  failures(o: { unresolved?: boolean; limit: number; offset: number }): FailureRow[] {
    const where = o.unresolved ? 'WHERE resolved_at IS NULL' : '';
    return this.q(`SELECT * FROM replica_failures ${where} ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`).all(o.limit, o.offset) as FailureRow[];
  }
  unresolvedIds(): number[] {
    return (this.q('SELECT id FROM replica_failures WHERE resolved_at IS NULL ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id);
  }
  unresolvedCount(): number {
    return (this.q('SELECT count(*) AS n FROM replica_failures WHERE resolved_at IS NULL').get() as { n: number }).n;
  }
  repairedSince(iso: string): number {
    return (this.q('SELECT count(*) AS n FROM replica_failures WHERE resolved_at IS NOT NULL AND resolved_at >= ?').get(iso) as { n: number }).n;
  }

  /**
   * When the oldest change not yet on its target began waiting: the oldest
   * queued or running copy, or the start of the oldest unresolved failure
   * streak (a row reopened after a repair starts a new streak). Null when
   * nothing waits.
   */
  oldestPending(): { at: string | null; queued: number } {
    const ops = this.q("SELECT min(created_at) AS at, count(*) AS n FROM ops WHERE kind IN ('replica.copy', 'replica_retry') AND status IN ('queued', 'running')").get() as { at: string | null; n: number };
    const fail = this.q('SELECT min(created_at) AS at FROM replica_failures WHERE resolved_at IS NULL').get() as { at: string | null };
    const at = [ops.at, fail.at].filter((x): x is string => !!x).sort()[0] ?? null;
    return { at, queued: ops.n };
  }

  // Report
  report(): ReportRow | undefined {
    return this.q('SELECT * FROM replica_report WHERE id = 1').get() as ReportRow | undefined;
  }
  saveReport(r: Omit<ReportRow, 'id'>): void {
    this.q(`INSERT INTO replica_report (id, ran_at, unresolved, repaired_24h, actionable, body) VALUES (1, @ran_at, @unresolved, @repaired_24h, @actionable, @body)
      ON CONFLICT (id) DO UPDATE SET ran_at = excluded.ran_at, unresolved = excluded.unresolved, repaired_24h = excluded.repaired_24h, actionable = excluded.actionable, body = excluded.body`).run(r);
  }

  /** The last audit result (JSON), or null. */
  audit(): string | null {
    return (this.q('SELECT body FROM replica_audit WHERE id = 1').get() as { body: string } | undefined)?.body ?? null;
  }
  saveAudit(body: string): void {
    this.q('INSERT INTO replica_audit (id, ran_at, body) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET ran_at = excluded.ran_at, body = excluded.body').run(new Date().toISOString(), body);
  }
  /** The last restore drill (JSON), or null. */
  drill(): string | null {
    return (this.q('SELECT body FROM replica_drill WHERE id = 1').get() as { body: string } | undefined)?.body ?? null;
  }
  saveDrill(body: string): void {
    this.q('INSERT INTO replica_drill (id, ran_at, body) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET ran_at = excluded.ran_at, body = excluded.body').run(new Date().toISOString(), body);
  }
  /** A random live folder (not internal) of a storage linked to an enabled target, from the catalogue; null when none. */
  sampleFolder(): { storage_id: number; rel: string } | null {
    const r = this.q(`SELECT n.storage_id, n.path FROM nodes n JOIN storages s ON s.id = n.storage_id JOIN replica_targets t ON t.id = s.replica_target_id
      WHERE t.enabled = 1 AND n.type = 'dir' AND n.deleted_at IS NULL AND n.path NOT LIKE '.%' ORDER BY random() LIMIT 1`).get() as { storage_id: number; path: string } | undefined;
    if (r) return { storage_id: r.storage_id, rel: r.path };
    const s = this.q('SELECT s.id FROM storages s JOIN replica_targets t ON t.id = s.replica_target_id WHERE t.enabled = 1 ORDER BY random() LIMIT 1').get() as { id: number } | undefined;
    return s ? { storage_id: s.id, rel: '' } : null;
  }
  /** Up to `n` random live files of a storage from the catalogue (read of its table). */
  sampleFiles(storageId: number, n: number): string[] {
    return (this.q("SELECT path FROM nodes WHERE storage_id = ? AND type = 'file' AND deleted_at IS NULL ORDER BY random() LIMIT ?").all(storageId, n) as Array<{ path: string }>).map((r) => r.path);
  }

  /** Storage link of a storage uid (read of the catalogue's table), or undefined for an unknown uid. */
  storageByUid(uid: string): { id: number; name: string; replica_target_id: number | null } | undefined {
    return this.q('SELECT id, name, replica_target_id FROM storages WHERE uid = ?').get(uid) as never;
  }

  storage(id: number): { id: number; uid: string; name: string; driver: string; config: string; replica_target_id: number | null } | undefined {
    return this.q('SELECT id, uid, name, driver, config, replica_target_id FROM storages WHERE id = ?').get(id) as never;
  }
  storageByName(name: string): { id: number; uid: string; name: string } | undefined {
    return this.q('SELECT id, uid, name FROM storages WHERE name = ? OR uid = ? ORDER BY uid = ? DESC LIMIT 1').get(name, name, name) as never;
  }
  /** The storages backed up to an enabled target (the ones replication, audits and drills act on). */
  linkedStorageIds(storageId?: number): number[] {
    const rows = this.q('SELECT s.id FROM storages s JOIN replica_targets t ON t.id = s.replica_target_id WHERE t.enabled = 1 ORDER BY s.id').all() as Array<{ id: number }>;
    return rows.map((r) => r.id).filter((id) => storageId === undefined || id === storageId);
  }
  storages(): Array<{ id: number; name: string; driver: string; config: string; replica_target_id: number | null }> {
    return this.q('SELECT id, name, driver, config, replica_target_id FROM storages ORDER BY id').all() as never;
  }
  /** Status of the live op with dedup key `key` (read of the jobs table), or undefined. */
  /** Runs `fn` in one transaction (one commit for many rows). */
  atomically(fn: () => void): void {
    this.s.transaction(fn)();
  }

  /**
   * The dedup key for a new request of the work `base` names: a request still
   * queued absorbs it, but one already running does not (it may have read its
   * input before the change that prompted this request): the new one waits
   * behind it under a second key.
   */
  requestKey(base: string): string {
    return this.liveOp(base) === 'running' ? `${base}#next` : base;
  }

  liveOp(key: string): 'queued' | 'running' | undefined {
    return (this.q("SELECT status FROM ops WHERE dedup_key = ? AND status IN ('queued','running')").get(key) as { status: 'queued' | 'running' } | undefined)?.status;
  }
}
