/**
 * The replication tables (owner: replication): targets, rules, the failure log and the report row, all on
 * `db.async` (docs/architecture.md, "One asynchronous data layer"). Read-decide-writes are one statement or
 * one unit: a failure recorded (opened once however many record it at once), a target's name (checked with
 * its insert or rename), a rule changed (the changed row returned, none when it is gone).
 *
 * Targets, rules and failures belong to a tenant (docs/tenants.md): a target and a rule to the tenant whose
 * admin made it, a failure to its storage's. Every statement names the tenant it is about; the installation's
 * report, audit and drill read over a list of tenants (`among`: every tenant's, from `TenantsRepo.list`).
 */
import { randomBytes } from 'node:crypto';
import type { Db, TenantScope } from '../db';
import { AppError } from '../errors';
import type { FailureCode, ReplicaMode, ReplicaOp, TargetMode } from './types';

export interface TargetRow extends TenantScope {
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
export interface RuleRow extends TenantScope {
  id: number;
  path_pattern: string;
  mode: ReplicaMode;
  priority: number;
  enabled: number;
  description: string | null;
  created_at: string;
  updated_at: string;
}
export interface FailureRow extends TenantScope {
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
const count = (rows: Array<{ n: number | string }>) => Number(rows[0]?.n ?? 0);
export const newTargetUid = (): string => 'rt' + randomBytes(8).toString('hex');

/** Tenants a statement spans (the installation's reports: every tenant; a tenant admin's figures: theirs). */
export type Among = readonly TenantScope[];
/** `tenant_id IN (…)` placeholders and values for `among` (none: `IN (NULL)`, which matches nothing). */
const inTenants = (among: Among) => ({ list: among.length ? among.map(() => '?').join(', ') : 'NULL', ids: among.map((t) => t.tenant_id) });

/** A storage as replication reads it (the catalogue's table), with its tenant. */
export interface ReplicaStorage extends TenantScope {
  id: number;
  uid: string;
  name: string;
  driver: string;
  config: string;
  replica_target_id: number | null;
}

type TargetFields = Pick<TargetRow, 'uid' | 'name' | 'driver' | 'config' | 'mode' | 'enabled'>;
type FailureInput = { storage_id: number; rel: string; op: ReplicaOp; to_rel: string | null; from_rel: string | null; code: FailureCode; message: string };
/** A failure's key after its tenant (`tenant_id = ? AND ${FAILURE_KEY}`: the static scan reads the tenant in each statement). */
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
  /** The targets of the tenants given, by id. */
  targets(among: Among): Promise<TargetRow[]> {
    const t = inTenants(among);
    return this.sql(`SELECT * FROM replica_targets WHERE tenant_id IN (${t.list}) ORDER BY id`, t.ids);
  }
  /** The tenant's target `id`, or undefined (another tenant's too). */
  async target(s: TenantScope, id: number): Promise<TargetRow | undefined> {
    return (await this.sql<TargetRow>('SELECT * FROM replica_targets WHERE tenant_id = ? AND id = ?', [s.tenant_id, id]))[0];
  }
  async targetNameTaken(s: TenantScope, name: string, exceptId = -1): Promise<boolean> {
    return (await this.sql('SELECT 1 FROM replica_targets WHERE tenant_id = ? AND name = ? AND id != ?', [s.tenant_id, name, exceptId])).length > 0;
  }
  /** Inserts a target of the tenant; `name_taken` when another of its targets holds the name (checked in the same unit as the insert). */
  insertTarget(s: TenantScope, r: TargetFields): Promise<number | 'name_taken'> {
    const t = now();
    return this.db.async.unit(
      function* (x) {
        if ((yield* x.sql('SELECT 1 FROM replica_targets WHERE tenant_id = ? AND name = ?', [s.tenant_id, r.name])).length) return 'name_taken' as const;
        const [row] = yield* x.sql<{ id: number }>(
          'INSERT INTO replica_targets (tenant_id, uid, name, driver, config, mode, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
          [s.tenant_id, r.uid, r.name, r.driver, r.config, r.mode, r.enabled, t, t],
        );
        return Number(row!.id);
      },
      { isolation: 'serializable' },
    );
  }
  /** Changes the tenant's target; false when it is gone, `name_taken` when a new name is another's (checked with the write). */
  patchTarget(s: TenantScope, id: number, p: Partial<Omit<TargetFields, 'uid'>>): Promise<boolean | 'name_taken'> {
    const keys = Object.keys(p);
    if (!keys.length) return this.target(s, id).then((r) => r !== undefined);
    const update = `UPDATE replica_targets SET ${keys.map((k) => `${k} = @${k}, `).join('')}updated_at = @updated_at WHERE tenant_id = @tenant_id AND id = @id RETURNING id`;
    const params = { ...p, id, tenant_id: s.tenant_id, updated_at: now() };
    return this.db.async.unit(
      function* (x) {
        if (
          p.name !== undefined &&
          (yield* x.sql('SELECT 1 FROM replica_targets WHERE tenant_id = ? AND name = ? AND id != ?', [s.tenant_id, p.name, id])).length
        )
          return 'name_taken' as const;
        return (yield* x.sql(update, params)).length > 0;
      },
      { isolation: 'serializable' },
    );
  }
  /** Deletes the tenant's target; false when it was gone already. */
  async deleteTarget(s: TenantScope, id: number): Promise<boolean> {
    return (await this.write('DELETE FROM replica_targets WHERE tenant_id = ? AND id = ? RETURNING id', [s.tenant_id, id])).length > 0;
  }

  // Rules
  /** The tenant's rules, in the order they are evaluated. */
  rules(s: TenantScope): Promise<RuleRow[]> {
    return this.sql('SELECT * FROM replica_rules WHERE tenant_id = ? ORDER BY priority, id', [s.tenant_id]);
  }
  async rule(s: TenantScope, id: number): Promise<RuleRow | undefined> {
    return (await this.sql<RuleRow>('SELECT * FROM replica_rules WHERE tenant_id = ? AND id = ?', [s.tenant_id, id]))[0];
  }
  /** Inserts a rule of the tenant; the new row. */
  async insertRule(s: TenantScope, r: Pick<RuleRow, 'path_pattern' | 'mode' | 'priority' | 'enabled' | 'description'>): Promise<RuleRow> {
    const t = now();
    const [row] = await this.write<RuleRow>(
      'INSERT INTO replica_rules (tenant_id, path_pattern, mode, priority, enabled, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *',
      [s.tenant_id, r.path_pattern, r.mode, r.priority, r.enabled, r.description, t, t],
    );
    return row!;
  }
  /** Changes the tenant's rule; the row as it is now, or undefined when it is gone (one statement: no rule deleted in between). */
  async patchRule(
    s: TenantScope,
    id: number,
    p: Partial<Pick<RuleRow, 'path_pattern' | 'mode' | 'priority' | 'enabled' | 'description'>>,
  ): Promise<RuleRow | undefined> {
    const keys = Object.keys(p);
    if (!keys.length) return this.rule(s, id);
    const set = keys.map((k) => `${k} = @${k}, `).join('');
    return (
      await this.write<RuleRow>(`UPDATE replica_rules SET ${set}updated_at = @updated_at WHERE tenant_id = @tenant_id AND id = @id RETURNING *`, {
        ...p,
        id,
        tenant_id: s.tenant_id,
        updated_at: now(),
      })
    )[0];
  }
  async deleteRule(s: TenantScope, id: number): Promise<boolean> {
    return (await this.write('DELETE FROM replica_rules WHERE tenant_id = ? AND id = ? RETURNING id', [s.tenant_id, id])).length > 0;
  }

  // Failures (`s`: the storage's tenant)
  /**
   * Records a failure of (storage, rel, op): a new row, or the same row again
   * with its attempt count raised and `resolved_at` cleared. Returns the row
   * and whether it was (re)opened by this call (it was not unresolved before).
   * Serializable: of callers racing on one key exactly one opens it.
   */
  recordFailure(s: TenantScope, f: FailureInput): Promise<{ row: FailureRow; opened: boolean }> {
    const t = now();
    const params = { ...f, tenant_id: s.tenant_id, message: f.message.slice(0, 2000), t };
    return this.db.async.unit(
      function* (x) {
        const [before] = yield* x.sql<{ resolved_at: string | null }>(`SELECT resolved_at FROM replica_failures WHERE tenant_id = ? AND ${FAILURE_KEY}`, [
          s.tenant_id,
          f.storage_id,
          f.rel,
          f.op,
        ]);
        const [row] = yield* x.sql<FailureRow>(
          `INSERT INTO replica_failures (tenant_id, storage_id, rel, op, to_rel, from_rel, code, message, attempts, created_at, updated_at)
          VALUES (@tenant_id, @storage_id, @rel, @op, @to_rel, @from_rel, @code, @message, 1, @t, @t)
          ON CONFLICT (storage_id, rel, op) DO UPDATE SET attempts = replica_failures.attempts + 1, code = excluded.code, message = excluded.message,
            to_rel = excluded.to_rel, from_rel = excluded.from_rel, updated_at = excluded.updated_at, resolved_at = NULL,
            created_at = CASE WHEN replica_failures.resolved_at IS NULL THEN replica_failures.created_at ELSE excluded.created_at END
          WHERE replica_failures.tenant_id = excluded.tenant_id
          RETURNING *`,
          params,
        );
        // A key held by another tenant's row (a storage id forged across tenants): nothing recorded.
        if (!row) throw new AppError('not_found');
        return { row, opened: !before || before.resolved_at !== null };
      },
      { isolation: 'serializable' },
    );
  }
  /**
   * Records another attempt on the failure of (storage, rel, op) only while it is unresolved (one
   * conditional statement: a row resolved meanwhile is not reopened). False when there was none open.
   */
  async recordIfOpen(s: TenantScope, f: FailureInput): Promise<boolean> {
    const rows = await this.write(
      `UPDATE replica_failures SET attempts = attempts + 1, code = ?, message = ?, to_rel = ?, from_rel = ?, updated_at = ?
        WHERE tenant_id = ? AND ${FAILURE_KEY} AND resolved_at IS NULL RETURNING id`,
      [f.code, f.message.slice(0, 2000), f.to_rel, f.from_rel, now(), s.tenant_id, f.storage_id, f.rel, f.op],
    );
    return rows.length > 0;
  }
  /** Marks the unresolved failure of (storage, rel, op) resolved; false when there was none. */
  async resolve(s: TenantScope, storageId: number, rel: string, op: ReplicaOp): Promise<boolean> {
    const t = now();
    const done = await this.write(
      `UPDATE replica_failures SET resolved_at = ?, updated_at = ? WHERE tenant_id = ? AND ${FAILURE_KEY} AND resolved_at IS NULL RETURNING id`,
      [t, t, s.tenant_id, storageId, rel, op],
    );
    return done.length > 0;
  }
  /** Forgets the failure of (storage, rel, op): its storage has no target to repair against any more. */
  async dropFailure(s: TenantScope, storageId: number, rel: string, op: ReplicaOp): Promise<void> {
    await this.write(`DELETE FROM replica_failures WHERE tenant_id = ? AND ${FAILURE_KEY}`, [s.tenant_id, storageId, rel, op]);
  }
  /** Forgets every failure of the tenant's storages linked to its target `targetId` (the target is being deleted). */
  async dropFailuresOfTarget(s: TenantScope, targetId: number): Promise<number> {
    return (
      await this.write(
        'DELETE FROM replica_failures WHERE tenant_id = ? AND storage_id IN (SELECT id FROM storages WHERE tenant_id = ? AND replica_target_id = ?) RETURNING id',
        [s.tenant_id, s.tenant_id, targetId],
      )
    ).length;
  }
  async failure(s: TenantScope, id: number): Promise<FailureRow | undefined> {
    return (await this.sql<FailureRow>('SELECT * FROM replica_failures WHERE tenant_id = ? AND id = ?', [s.tenant_id, id]))[0];
  }
  async failureByKey(s: TenantScope, storageId: number, rel: string, op: ReplicaOp): Promise<FailureRow | undefined> {
    return (await this.sql<FailureRow>(`SELECT * FROM replica_failures WHERE tenant_id = ? AND ${FAILURE_KEY}`, [s.tenant_id, storageId, rel, op]))[0];
  }
  failures(s: TenantScope, o: { unresolved?: boolean; limit: number; offset: number }): Promise<FailureRow[]> {
    const open = o.unresolved ? 'AND resolved_at IS NULL' : '';
    return this.sql(`SELECT * FROM replica_failures WHERE tenant_id = ? ${open} ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`, [
      s.tenant_id,
      o.limit,
      o.offset,
    ]);
  }
  async unresolvedIds(s: TenantScope): Promise<number[]> {
    return (await this.sql<{ id: number }>('SELECT id FROM replica_failures WHERE tenant_id = ? AND resolved_at IS NULL ORDER BY id', [s.tenant_id])).map(
      (r) => r.id,
    );
  }
  async unresolvedCount(among: Among): Promise<number> {
    const t = inTenants(among);
    return count(await this.sql(`SELECT count(*) AS n FROM replica_failures WHERE tenant_id IN (${t.list}) AND resolved_at IS NULL`, t.ids));
  }
  async repairedSince(among: Among, iso: string): Promise<number> {
    const t = inTenants(among);
    return count(
      await this.sql(`SELECT count(*) AS n FROM replica_failures WHERE tenant_id IN (${t.list}) AND resolved_at IS NOT NULL AND resolved_at >= ?`, [
        ...t.ids,
        iso,
      ]),
    );
  }

  /**
   * When the oldest change of the tenants not yet on its target began waiting: the oldest
   * queued or running copy, or the start of the oldest unresolved failure
   * streak (a row reopened after a repair starts a new streak). Null when
   * nothing waits.
   */
  oldestPending(among: Among): Promise<{ at: string | null; queued: number }> {
    const t = inTenants(among);
    return this.db.async.read(function* (x) {
      const [ops] = yield* x.sql<{ at: string | null; n: number | string }>(
        `SELECT min(created_at) AS at, count(*) AS n FROM ops WHERE tenant_id IN (${t.list}) AND kind IN ('replica.copy', 'replica_retry') AND status IN ('queued', 'running')`,
        t.ids,
      );
      const [fail] = yield* x.sql<{ at: string | null }>(
        `SELECT min(created_at) AS at FROM replica_failures WHERE tenant_id IN (${t.list}) AND resolved_at IS NULL`,
        t.ids,
      );
      const at = [ops?.at, fail?.at].filter((v): v is string => !!v).sort()[0] ?? null;
      return { at, queued: Number(ops?.n ?? 0) };
    });
  }

  // The installation's report, audit and drill (one row each)
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
  /** A random live folder (not internal) of a storage of the tenants linked to an enabled target, from the catalogue; null when none. */
  sampleFolder(among: Among): Promise<{ storage_id: number; rel: string } | null> {
    const t = inTenants(among);
    return this.db.async.read(function* (x) {
      const [r] = yield* x.sql<{
        storage_id: number;
        path: string;
      }>(
        `SELECT n.storage_id, n.path FROM nodes n JOIN storages s ON s.id = n.storage_id JOIN replica_targets t ON t.id = s.replica_target_id
      WHERE s.tenant_id IN (${t.list}) AND n.tenant_id = s.tenant_id AND t.tenant_id = s.tenant_id AND t.enabled = 1 AND n.type = 'dir' AND n.deleted_at IS NULL AND n.path NOT LIKE '.%' ORDER BY random() LIMIT 1`,
        t.ids,
      );
      if (r) return { storage_id: r.storage_id, rel: r.path };
      const [s] = yield* x.sql<{ id: number }>(
        `SELECT s.id FROM storages s JOIN replica_targets t ON t.id = s.replica_target_id WHERE s.tenant_id IN (${t.list}) AND t.tenant_id = s.tenant_id AND t.enabled = 1 ORDER BY random() LIMIT 1`,
        t.ids,
      );
      return s ? { storage_id: s.id, rel: '' } : null;
    });
  }
  /** Up to `n` random live files of storage `s` from the catalogue (read of its table). */
  async sampleFiles(s: TenantScope & { id: number }, n: number): Promise<string[]> {
    return (
      await this.sql<{ path: string }>(
        "SELECT path FROM nodes WHERE tenant_id = ? AND storage_id = ? AND type = 'file' AND deleted_at IS NULL ORDER BY random() LIMIT ?",
        [s.tenant_id, s.id, n],
      )
    ).map((r) => r.path);
  }

  /**
   * The enabled target of the tenant's storage with uid `uid` (or, given a number, that id), with the
   * storage's name; null when it has none (reads of the catalogue's table). One read: a change on any storage asks it.
   */
  async linkOf(s: TenantScope, storage: string | number): Promise<{ storage_id: number; storage: string; target_id: number; mode: TargetMode } | null> {
    const rows = await this.sql<{ storage_id: number; storage: string; target_id: number; mode: TargetMode }>(
      `SELECT s.id AS storage_id, s.name AS storage, t.id AS target_id, t.mode FROM storages s JOIN replica_targets t ON t.id = s.replica_target_id
        WHERE s.tenant_id = ? AND s.${typeof storage === 'number' ? 'id' : 'uid'} = ? AND t.tenant_id = s.tenant_id AND t.enabled = 1`,
      [s.tenant_id, storage],
    );
    return rows[0] ?? null;
  }

  async storage(s: TenantScope, id: number): Promise<ReplicaStorage | undefined> {
    return (
      await this.sql<ReplicaStorage>('SELECT id, uid, name, driver, config, replica_target_id, tenant_id FROM storages WHERE tenant_id = ? AND id = ?', [
        s.tenant_id,
        id,
      ])
    )[0];
  }
  async storageByName(s: TenantScope, name: string): Promise<{ id: number; uid: string; name: string } | undefined> {
    return (
      await this.sql<never>('SELECT id, uid, name FROM storages WHERE tenant_id = ? AND (name = ? OR uid = ?) ORDER BY uid = ? DESC LIMIT 1', [
        s.tenant_id,
        name,
        name,
        name,
      ])
    )[0];
  }
  /** The storages of the tenants backed up to an enabled target of their tenant (the ones replication, audits and drills act on). */
  async linkedStorageIds(among: Among, storageId?: number): Promise<number[]> {
    const t = inTenants(among);
    const rows = await this.sql<{ id: number }>(
      `SELECT s.id FROM storages s JOIN replica_targets t ON t.id = s.replica_target_id WHERE s.tenant_id IN (${t.list}) AND t.tenant_id = s.tenant_id AND t.enabled = 1 ORDER BY s.id`,
      t.ids,
    );
    return rows.map((r) => r.id).filter((id) => storageId === undefined || id === storageId);
  }
  /** The storages of the tenants, by id. */
  storages(among: Among): Promise<ReplicaStorage[]> {
    const t = inTenants(among);
    return this.sql(`SELECT id, uid, name, driver, config, replica_target_id, tenant_id FROM storages WHERE tenant_id IN (${t.list}) ORDER BY id`, t.ids);
  }
}
