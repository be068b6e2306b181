/**
 * The replication tables (owner: replication): targets, rules, the failure log and the report row, all on
 * `db.async` (docs/architecture.md, "One asynchronous data layer"). Read-decide-writes are one statement or
 * one unit: a failure recorded (opened once however many record it at once), a target's name (checked with
 * its insert or rename), a rule changed (the changed row returned, none when it is gone).
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_TENANT, type Db } from '../db';
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
/**
 * The tenant whose storages replication reads: tenant 1's, like its targets, until the replication cluster
 * is scoped (docs/tenants.md, "Step 1: what is left"); every statement over `storages` here names it.
 */
const TENANT = DEFAULT_TENANT.tenant_id;
const count = (rows: Array<{ n: number | string }>) => Number(rows[0]?.n ?? 0);
export const newTargetUid = (): string => 'rt' + randomBytes(8).toString('hex');

type TargetFields = Pick<TargetRow, 'uid' | 'name' | 'driver' | 'config' | 'mode' | 'enabled'>;
type FailureInput = { storage_id: number; rel: string; op: ReplicaOp; to_rel: string | null; from_rel: string | null; code: FailureCode; message: string };
const FAILURE_KEY = 'storage_id = ? AND rel = ? AND op = ?';

export class ReplicationRepo {
  constructor(private db: Db) {}

  /** One SQL statement; `?` or `@name` parameters. */
  private sql<R>(text: string, params: unknown[] | Record<string, unknown> = []): Promise<R[]> {
    return this.db.async.sql<R>(text, params);
  }
  /** A write as a unit of one statement (on SQLite it waits out a lock held elsewhere, like every write). */
  private write<R>(text: string, params: unknown[] | Record<string, unknown> = []): Promise<R[]> {
    return this.db.async.unit(function* (t) {
      return yield* t.sql<R>(text, params);
    });
  }

  // Targets
  targets(): Promise<TargetRow[]> {
    return this.sql('SELECT * FROM replica_targets ORDER BY id');
  }
  async target(id: number): Promise<TargetRow | undefined> {
    return (await this.sql<TargetRow>('SELECT * FROM replica_targets WHERE id = ?', [id]))[0];
  }
  async targetNameTaken(name: string, exceptId = -1): Promise<boolean> {
    return (await this.sql('SELECT 1 FROM replica_targets WHERE name = ? AND id != ?', [name, exceptId])).length > 0;
  }
  /** Inserts a target; `name_taken` when another holds the name (checked in the same unit as the insert). */
  insertTarget(r: TargetFields): Promise<number | 'name_taken'> {
    const t = now();
    return this.db.async.unit(
      function* (x) {
        if ((yield* x.sql('SELECT 1 FROM replica_targets WHERE name = ?', [r.name])).length) return 'name_taken' as const;
        const [row] = yield* x.sql<{ id: number }>(
          'INSERT INTO replica_targets (uid, name, driver, config, mode, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
          [r.uid, r.name, r.driver, r.config, r.mode, r.enabled, t, t],
        );
        return Number(row!.id);
      },
      { isolation: 'serializable' },
    );
  }
  /** Changes a target; false when it is gone, `name_taken` when a new name is another's (checked with the write). */
  patchTarget(id: number, p: Partial<Omit<TargetFields, 'uid'>>): Promise<boolean | 'name_taken'> {
    const keys = Object.keys(p);
    if (!keys.length) return this.target(id).then((r) => r !== undefined);
    const update = `UPDATE replica_targets SET ${keys.map((k) => `${k} = @${k}, `).join('')}updated_at = @updated_at WHERE id = @id RETURNING id`;
    const params = { ...p, id, updated_at: now() };
    return this.db.async.unit(
      function* (x) {
        if (p.name !== undefined && (yield* x.sql('SELECT 1 FROM replica_targets WHERE name = ? AND id != ?', [p.name, id])).length)
          return 'name_taken' as const;
        return (yield* x.sql(update, params)).length > 0;
      },
      { isolation: 'serializable' },
    );
  }
  /** Deletes a target; false when it was gone already. */
  async deleteTarget(id: number): Promise<boolean> {
    return (await this.write('DELETE FROM replica_targets WHERE id = ? RETURNING id', [id])).length > 0;
  }

  // Rules
  rules(): Promise<RuleRow[]> {
    return this.sql('SELECT * FROM replica_rules ORDER BY priority, id');
  }
  async rule(id: number): Promise<RuleRow | undefined> {
    return (await this.sql<RuleRow>('SELECT * FROM replica_rules WHERE id = ?', [id]))[0];
  }
  /** Inserts a rule; the new row. */
  async insertRule(r: Pick<RuleRow, 'path_pattern' | 'mode' | 'priority' | 'enabled' | 'description'>): Promise<RuleRow> {
    const t = now();
    const [row] = await this.write<RuleRow>(
      'INSERT INTO replica_rules (path_pattern, mode, priority, enabled, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *',
      [r.path_pattern, r.mode, r.priority, r.enabled, r.description, t, t],
    );
    return row!;
  }
  /** Changes a rule; the row as it is now, or undefined when it is gone (one statement: no rule deleted in between). */
  async patchRule(id: number, p: Partial<Pick<RuleRow, 'path_pattern' | 'mode' | 'priority' | 'enabled' | 'description'>>): Promise<RuleRow | undefined> {
    const keys = Object.keys(p);
    if (!keys.length) return this.rule(id);
    const set = keys.map((k) => `${k} = @${k}, `).join('');
    return (
      await this.write<RuleRow>(`UPDATE replica_rules SET ${set}updated_at = @updated_at WHERE id = @id RETURNING *`, { ...p, id, updated_at: now() })
    )[0];
  }
  async deleteRule(id: number): Promise<boolean> {
    return (await this.write('DELETE FROM replica_rules WHERE id = ? RETURNING id', [id])).length > 0;
  }

  // Failures
  /**
   * Records a failure of (storage, rel, op): a new row, or the same row again
   * with its attempt count raised and `resolved_at` cleared. Returns the row
   * and whether it was (re)opened by this call (it was not unresolved before).
   * Serializable: of callers racing on one key exactly one opens it.
   */
  recordFailure(f: FailureInput): Promise<{ row: FailureRow; opened: boolean }> {
    const t = now();
    const params = { ...f, message: f.message.slice(0, 2000), t };
    return this.db.async.unit(
      function* (x) {
        const [before] = yield* x.sql<{ resolved_at: string | null }>(`SELECT resolved_at FROM replica_failures WHERE ${FAILURE_KEY}`, [
          f.storage_id,
          f.rel,
          f.op,
        ]);
        const [row] = yield* x.sql<FailureRow>(
          `INSERT INTO replica_failures (storage_id, rel, op, to_rel, from_rel, code, message, attempts, created_at, updated_at)
          VALUES (@storage_id, @rel, @op, @to_rel, @from_rel, @code, @message, 1, @t, @t)
          ON CONFLICT (storage_id, rel, op) DO UPDATE SET attempts = replica_failures.attempts + 1, code = excluded.code, message = excluded.message,
            to_rel = excluded.to_rel, from_rel = excluded.from_rel, updated_at = excluded.updated_at, resolved_at = NULL,
            created_at = CASE WHEN replica_failures.resolved_at IS NULL THEN replica_failures.created_at ELSE excluded.created_at END
          RETURNING *`,
          params,
        );
        return { row: row!, opened: !before || before.resolved_at !== null };
      },
      { isolation: 'serializable' },
    );
  }
  /**
   * Records another attempt on the failure of (storage, rel, op) only while it is unresolved (one
   * conditional statement: a row resolved meanwhile is not reopened). False when there was none open.
   */
  async recordIfOpen(f: FailureInput): Promise<boolean> {
    const rows = await this.write(
      `UPDATE replica_failures SET attempts = attempts + 1, code = ?, message = ?, to_rel = ?, from_rel = ?, updated_at = ?
        WHERE ${FAILURE_KEY} AND resolved_at IS NULL RETURNING id`,
      [f.code, f.message.slice(0, 2000), f.to_rel, f.from_rel, now(), f.storage_id, f.rel, f.op],
    );
    return rows.length > 0;
  }
  /** Marks the unresolved failure of (storage, rel, op) resolved; false when there was none. */
  async resolve(storageId: number, rel: string, op: ReplicaOp): Promise<boolean> {
    const t = now();
    return (
      (
        await this.write(`UPDATE replica_failures SET resolved_at = ?, updated_at = ? WHERE ${FAILURE_KEY} AND resolved_at IS NULL RETURNING id`, [
          t,
          t,
          storageId,
          rel,
          op,
        ])
      ).length > 0
    );
  }
  /** Forgets the failure of (storage, rel, op): its storage has no target to repair against any more. */
  async dropFailure(storageId: number, rel: string, op: ReplicaOp): Promise<void> {
    await this.write(`DELETE FROM replica_failures WHERE ${FAILURE_KEY}`, [storageId, rel, op]);
  }
  /** Forgets every failure of the storages linked to target `targetId` (the target is being deleted). */
  async dropFailuresOfTarget(targetId: number): Promise<number> {
    return (
      await this.write(
        'DELETE FROM replica_failures WHERE storage_id IN (SELECT id FROM storages WHERE tenant_id = ? AND replica_target_id = ?) RETURNING id',
        [TENANT, targetId],
      )
    ).length;
  }
  async failure(id: number): Promise<FailureRow | undefined> {
    return (await this.sql<FailureRow>('SELECT * FROM replica_failures WHERE id = ?', [id]))[0];
  }
  async failureByKey(storageId: number, rel: string, op: ReplicaOp): Promise<FailureRow | undefined> {
    return (await this.sql<FailureRow>(`SELECT * FROM replica_failures WHERE ${FAILURE_KEY}`, [storageId, rel, op]))[0];
  }
  failures(o: { unresolved?: boolean; limit: number; offset: number }): Promise<FailureRow[]> {
    const where = o.unresolved ? 'WHERE resolved_at IS NULL' : '';
    return this.sql(`SELECT * FROM replica_failures ${where} ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`, [o.limit, o.offset]);
  }
  async unresolvedIds(): Promise<number[]> {
    return (await this.sql<{ id: number }>('SELECT id FROM replica_failures WHERE resolved_at IS NULL ORDER BY id')).map((r) => r.id);
  }
  async unresolvedCount(): Promise<number> {
    return count(await this.sql('SELECT count(*) AS n FROM replica_failures WHERE resolved_at IS NULL'));
  }
  async repairedSince(iso: string): Promise<number> {
    return count(await this.sql('SELECT count(*) AS n FROM replica_failures WHERE resolved_at IS NOT NULL AND resolved_at >= ?', [iso]));
  }

  /**
   * When the oldest change not yet on its target began waiting: the oldest
   * queued or running copy, or the start of the oldest unresolved failure
   * streak (a row reopened after a repair starts a new streak). Null when
   * nothing waits.
   */
  oldestPending(): Promise<{ at: string | null; queued: number }> {
    return this.db.async.read(function* (x) {
      const [ops] = yield* x.sql<{ at: string | null; n: number | string }>(
        "SELECT min(created_at) AS at, count(*) AS n FROM ops WHERE tenant_id = ? AND kind IN ('replica.copy', 'replica_retry') AND status IN ('queued', 'running')",
        [TENANT],
      );
      const [fail] = yield* x.sql<{ at: string | null }>('SELECT min(created_at) AS at FROM replica_failures WHERE resolved_at IS NULL');
      const at = [ops?.at, fail?.at].filter((v): v is string => !!v).sort()[0] ?? null;
      return { at, queued: Number(ops?.n ?? 0) };
    });
  }

  // Report
  async report(): Promise<ReportRow | undefined> {
    return (await this.sql<ReportRow>('SELECT * FROM replica_report WHERE id = 1'))[0];
  }
  async saveReport(r: Omit<ReportRow, 'id'>): Promise<void> {
    await this.write(
      `INSERT INTO replica_report (id, ran_at, unresolved, repaired_24h, actionable, body) VALUES (1, @ran_at, @unresolved, @repaired_24h, @actionable, @body)
      ON CONFLICT (id) DO UPDATE SET ran_at = excluded.ran_at, unresolved = excluded.unresolved, repaired_24h = excluded.repaired_24h, actionable = excluded.actionable, body = excluded.body`,
      r,
    );
  }

  /** The last audit result (JSON), or null. */
  async audit(): Promise<string | null> {
    return (await this.sql<{ body: string }>('SELECT body FROM replica_audit WHERE id = 1'))[0]?.body ?? null;
  }
  async saveAudit(body: string): Promise<void> {
    await this.write(
      'INSERT INTO replica_audit (id, ran_at, body) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET ran_at = excluded.ran_at, body = excluded.body',
      [now(), body],
    );
  }
  /** The last restore drill (JSON), or null. */
  async drill(): Promise<string | null> {
    return (await this.sql<{ body: string }>('SELECT body FROM replica_drill WHERE id = 1'))[0]?.body ?? null;
  }
  async saveDrill(body: string): Promise<void> {
    await this.write(
      'INSERT INTO replica_drill (id, ran_at, body) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET ran_at = excluded.ran_at, body = excluded.body',
      [now(), body],
    );
  }
  /** A random live folder (not internal) of a storage linked to an enabled target, from the catalogue; null when none. */
  sampleFolder(): Promise<{ storage_id: number; rel: string } | null> {
    return this.db.async.read(function* (x) {
      const [r] = yield* x.sql<{
        storage_id: number;
        path: string;
      }>(
        `SELECT n.storage_id, n.path FROM nodes n JOIN storages s ON s.id = n.storage_id JOIN replica_targets t ON t.id = s.replica_target_id
      WHERE s.tenant_id = ? AND n.tenant_id = s.tenant_id AND t.enabled = 1 AND n.type = 'dir' AND n.deleted_at IS NULL AND n.path NOT LIKE '.%' ORDER BY random() LIMIT 1`,
        [TENANT],
      );
      if (r) return { storage_id: r.storage_id, rel: r.path };
      const [s] = yield* x.sql<{ id: number }>(
        'SELECT s.id FROM storages s JOIN replica_targets t ON t.id = s.replica_target_id WHERE s.tenant_id = ? AND t.enabled = 1 ORDER BY random() LIMIT 1',
        [TENANT],
      );
      return s ? { storage_id: s.id, rel: '' } : null;
    });
  }
  /** Up to `n` random live files of a storage (of replication's tenant) from the catalogue (read of its table). */
  async sampleFiles(storageId: number, n: number): Promise<string[]> {
    return (
      await this.sql<{ path: string }>(
        "SELECT path FROM nodes WHERE tenant_id = ? AND storage_id = ? AND type = 'file' AND deleted_at IS NULL ORDER BY random() LIMIT ?",
        [TENANT, storageId, n],
      )
    ).map((r) => r.path);
  }

  /**
   * The enabled target of the storage with uid `uid` (or, given a number, that id), with the storage's
   * name; null when it has none (reads of the catalogue's table). One read: a change on any storage asks it.
   */
  async linkOf(storage: string | number): Promise<{ storage_id: number; storage: string; target_id: number; mode: TargetMode } | null> {
    const rows = await this.sql<{ storage_id: number; storage: string; target_id: number; mode: TargetMode }>(
      `SELECT s.id AS storage_id, s.name AS storage, t.id AS target_id, t.mode FROM storages s JOIN replica_targets t ON t.id = s.replica_target_id
        WHERE s.tenant_id = ? AND s.${typeof storage === 'number' ? 'id' : 'uid'} = ? AND t.enabled = 1`,
      [TENANT, storage],
    );
    return rows[0] ?? null;
  }

  async storage(id: number): Promise<{ id: number; uid: string; name: string; driver: string; config: string; replica_target_id: number | null } | undefined> {
    return (await this.sql<never>('SELECT id, uid, name, driver, config, replica_target_id FROM storages WHERE tenant_id = ? AND id = ?', [TENANT, id]))[0];
  }
  async storageByName(name: string): Promise<{ id: number; uid: string; name: string } | undefined> {
    return (
      await this.sql<never>('SELECT id, uid, name FROM storages WHERE tenant_id = ? AND (name = ? OR uid = ?) ORDER BY uid = ? DESC LIMIT 1', [
        TENANT,
        name,
        name,
        name,
      ])
    )[0];
  }
  /** The storages backed up to an enabled target (the ones replication, audits and drills act on). */
  async linkedStorageIds(storageId?: number): Promise<number[]> {
    const rows = await this.sql<{ id: number }>(
      'SELECT s.id FROM storages s JOIN replica_targets t ON t.id = s.replica_target_id WHERE s.tenant_id = ? AND t.enabled = 1 ORDER BY s.id',
      [TENANT],
    );
    return rows.map((r) => r.id).filter((id) => storageId === undefined || id === storageId);
  }
  storages(): Promise<Array<{ id: number; name: string; driver: string; config: string; replica_target_id: number | null }>> {
    return this.sql('SELECT id, name, driver, config, replica_target_id FROM storages WHERE tenant_id = ? ORDER BY id', [TENANT]);
  }
}
