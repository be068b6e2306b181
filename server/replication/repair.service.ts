/**
 * The failure log's face (list, count, Fix all, Fix one), a tenant's (its
 * storages' failures), and the status report, the installation's (every
 * tenant's failures and targets: the platform operator's): one row
 * overwritten per run, announced as `replica_status_report` only when
 * actionable (unresolved failures, repairs in the last 24 hours, or the
 * legacy single webhook URL set).
 */
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { ReplicaFailure, ReplicaReport, ReplicaStatus } from '../contract';
import { AppError } from '../errors';
import type { EventBus } from '../events';
import type { JobQueue, Scheduler } from '../jobs';
import { cleanRel, uiPath } from '../lib/paths';
import type { SettingsStore } from '../settings';
import type { Among, FailureRow, ReplicationRepo } from './replication.repo';
import { armCron } from './schedule';
import { REPLICA_OPS, type ReplicaOp } from './types';

export type FailureView = ReplicaFailure;
export type ReportView = ReplicaReport;

export const REPORT_SCHEDULE = 'replica.report';
/** Default recovery point above which the status warns (amber): an hour of changes not yet on the backup (`SERVICE_REPLICA_RPO_WARN`). */
export const RPO_WARN_S = 3600;

export class RepairService {
  constructor(
    private repo: ReplicationRepo,
    private queue: JobQueue,
    private bus: EventBus,
    private settings: SettingsStore,
    private lastAudit: () => Promise<ReplicaReport['audit']>,
    private lastDrill: () => Promise<ReplicaReport['drill']>,
    /** Every tenant (the installation's report and status). */
    private everyTenant: () => Promise<Among>,
    private rpoWarnS = RPO_WARN_S,
  ) {}

  /** `names`: storage names by id (a row of a storage not there is shown by its id). */
  private view(f: FailureRow, names: Map<number, string>): FailureView {
    const name = names.get(f.storage_id) ?? String(f.storage_id);
    return {
      id: f.id,
      path: uiPath(name, f.rel),
      storage_id: f.storage_id,
      op: f.op,
      to: f.to_rel === null ? null : uiPath(name, f.to_rel),
      code: f.code,
      message: f.message,
      attempts: f.attempts,
      created_at: f.created_at,
      updated_at: f.updated_at,
      resolved_at: f.resolved_at,
    };
  }

  /** The tenant's failures. */
  async failures(s: TenantScope, o: { unresolved?: boolean; limit: number; offset: number }): Promise<FailureView[]> {
    const [rows, storages] = await Promise.all([this.repo.failures(s, o), this.repo.storages([s])]);
    const names = new Map(storages.map((x) => [x.id, x.name]));
    return rows.map((f) => this.view(f, names));
  }

  /** How many of the tenant's failures are unresolved. */
  count(s: TenantScope): Promise<number> {
    return this.repo.unresolvedCount([s]);
  }

  /**
   * Queues one `replica_retry` op per unresolved failure of the tenant (a retry already queued absorbs its twin);
   * announces `replica_reconcile_done` in the tenant when it queued any.
   */
  async fixAll(s: TenantScope): Promise<{ queued: number }> {
    const ids = await this.repo.unresolvedIds(s);
    const tenant = { tenant_id: s.tenant_id };
    await this.queue.enqueueAll(
      'replica_retry',
      ids.map((id) => ({ payload: { failure_id: id }, o: { tenant, dedupKey: `replica_retry:${id}`, priority: -1 } })),
    );
    if (ids.length)
      await this.bus.emit(tenant, 'replica_reconcile_done', {
        title: 'Backup repair queued',
        body: `${ids.length} failed copies queued for another attempt.`,
        queued: ids.length,
      });
    return { queued: ids.length };
  }

  /** A UI path `/<storage name or uid>/<rel>` of the tenant as (storage id, rel); `not_found` for an unknown storage (or another tenant's). */
  async place(s: TenantScope, path: string): Promise<{ storage_id: number; rel: string }> {
    const trimmed = path.replace(/^\/+/, '');
    const slash = trimmed.indexOf('/');
    const storage = await this.repo.storageByName(s, slash < 0 ? trimmed : trimmed.slice(0, slash));
    if (!storage) throw new AppError('not_found');
    return { storage_id: storage.id, rel: cleanRel(slash < 0 ? '' : trimmed.slice(slash + 1), { allowReserved: true }) };
  }

  /** Queues the retry of the tenant's unresolved failure of (`path`, `op`); `not_found` when there is none. */
  async fixOne(s: TenantScope, path: string, op: string): Promise<{ queued: number; op_id: string }> {
    if (!(REPLICA_OPS as readonly string[]).includes(op))
      throw new AppError('validation_failed', { field: 'op' }, { field: 'op', reason: `one of ${REPLICA_OPS.join(', ')}` });
    const { storage_id, rel } = await this.place(s, path);
    // Resolved between this read and the retry: the retry finds it resolved and skips.
    const f = await this.repo.failureByKey(s, storage_id, rel, op as ReplicaOp);
    if (!f || f.resolved_at) throw new AppError('not_found');
    const tenant = { tenant_id: s.tenant_id };
    return {
      queued: 1,
      op_id: await this.queue.enqueue('replica_retry', { failure_id: f.id }, { tenant, dedupKey: `replica_retry:${f.id}`, priority: -1 }),
    };
  }

  /**
   * Live figures of the tenants' storages: the recovery point (age of the oldest change not yet replicated),
   * queued copies, unresolved failures. A tenant admin's are their tenant's; the installation's (`installationStatus`) every tenant's.
   */
  async status(among: Among, now = Date.now()): Promise<ReplicaStatus> {
    const [{ at, queued }, linked, unresolved] = await Promise.all([this.repo.oldestPending(among), this.linked(among), this.repo.unresolvedCount(among)]);
    const rpo = at ? Math.max(0, Math.round((now - Date.parse(at)) / 1000)) : 0;
    return { linked, rpo_s: rpo, oldest_pending_at: at, rpo_warn: rpo > this.rpoWarnS, rpo_warn_s: this.rpoWarnS, queued_copies: queued, unresolved };
  }

  /** The installation's live figures: every tenant's storages (the status page, the tray, the metrics). */
  async installationStatus(): Promise<ReplicaStatus> {
    return this.status(await this.everyTenant());
  }

  /** Whether any storage of the tenants is backed up to an enabled target (a disabled one backs up nothing). */
  private async linked(among: Among): Promise<boolean> {
    return (await this.repo.linkedStorageIds(among)).length > 0;
  }

  /** The latest report, or null before the first run. */
  async report(): Promise<ReportView | null> {
    const r = await this.repo.report();
    return r ? (JSON.parse(r.body) as ReportView) : null;
  }

  /** Runs the installation's report now (every tenant's): overwrites the row, announces it (to the operator's tenant) when actionable. */
  async runReport(): Promise<ReportView> {
    const ranAt = new Date();
    const every = await this.everyTenant();
    const [unresolved, repaired, storages, live, audit, drill, targets] = await Promise.all([
      this.repo.unresolvedCount(every),
      this.repo.repairedSince(every, new Date(ranAt.getTime() - 86_400_000).toISOString()),
      this.repo.storages(every),
      this.status(every, ranAt.getTime()),
      this.lastAudit(),
      this.lastDrill(),
      this.repo.targets(every),
    ]);
    const actionable = unresolved > 0 || repaired > 0 || !!this.settings.get('webhook_url');
    const view: ReportView = {
      ran_at: ranAt.toISOString(),
      unresolved,
      repaired_24h: repaired,
      actionable,
      rpo_s: live.rpo_s,
      rpo_warn: live.rpo_warn,
      audit,
      drill,
      targets: targets.map((t) => ({
        id: t.id,
        name: t.name,
        driver: t.driver,
        mode: t.mode,
        enabled: !!t.enabled,
        storages: storages.filter((s) => s.replica_target_id === t.id && s.tenant_id === t.tenant_id).map((s) => s.name),
      })),
    };
    await this.repo.saveReport({ ran_at: view.ran_at, unresolved, repaired_24h: repaired, actionable: actionable ? 1 : 0, body: JSON.stringify(view) });
    if (actionable)
      await this.bus.emit(DEFAULT_TENANT, 'replica_status_report', {
        title: 'Backup status',
        body: `${unresolved} unresolved failed copies; ${repaired} repaired in the last 24 hours.`,
        unresolved,
        repaired_24h: repaired,
      });
    return view;
  }

  /** (Re)arms the report schedule from the settings: removed when disabled. */
  schedule(scheduler: Scheduler, log: (msg: string, err?: unknown) => void): void {
    const cron = this.settings.get('replica_report_enabled') ? this.settings.get('replica_report_cron') : '';
    armCron(scheduler, REPORT_SCHEDULE, cron, () => this.runReport(), log);
  }
}
