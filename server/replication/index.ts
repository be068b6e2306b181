/**
 * Replication: a storage's changes copied to a backup-only target (spec:
 * Replication). `createReplication` builds the parts; the composition root
 * installs `decorator` on the driver manager, hands `targets.checkLink` to the
 * catalogue, and `main.ts` arms the report schedule.
 */
import { TenantsRepo, type Db, type TenantScope } from '../db';
import type { EventBus } from '../events';
import type { JobQueue, Scheduler } from '../jobs';
import type { SettingsStore } from '../settings';
import { ReplicaAudit } from './audit';
import { replicationDecorator } from './decorator';
import { RestoreDrill } from './drill';
import { ReplicationEngine } from './engine';
import { ReplicaPolicy } from './policy';
import { RepairService } from './repair.service';
import { ReplicationRepo } from './replication.repo';
import { TargetsService, type BackendRules } from './targets.service';
import type { RDriver } from './types';

export type { TargetInput, TargetView, BackendRules } from './targets.service';
export type { RuleInput, RuleView, ReplicaSettings } from './policy';
export type { FailureView, ReportView } from './repair.service';
export type { AuditResult } from './audit';
export { REPLICA_MODES, REPLICA_OPS, type ReplicaMode, type ReplicaOp, type TargetMode } from './types';
export { compileGlob, globProblem } from './glob';
export { replicaHostStatus, HOST_STATUS_EVERY_MS } from './host-status';

export interface ReplicationDeps {
  db: Db;
  bus: EventBus;
  queue: JobQueue;
  settings: SettingsStore;
  log: (msg: string, err?: unknown) => void;
  /** The catalogue's storage config rules (asked at call time: the catalogue is built after the decorator). */
  backends: () => BackendRules;
  /** Unlinks every storage of the tenant from its deleted target (the catalogue owns `storages`). */
  unlinkStorages: (s: TenantScope, targetId: number) => Promise<number>;
  /** The tenant of the storage with uid `uid` (or, given a number, that id); undefined when it is gone. A lookup, no query. */
  storageTenant: (storage: string | number) => TenantScope | undefined;
  /** A storage's short "where it points" line, reused for targets. */
  summary: (driver: string, config: Record<string, unknown>) => string;
  /** The live driver of a storage (the file service's pool). */
  primary: (storageId: number) => Promise<RDriver>;
  backoffMs: number;
  timeoutMs: number;
  /** Recovery point (seconds) above which the status warns. */
  rpoWarnS: number;
  /** A folder in the data dir for restore drills (never a storage). */
  scratchDir: string;
}

export function createReplication(d: ReplicationDeps) {
  const repo = new ReplicationRepo(d.db);
  // The installation's reports, audit, drill and the loop check span every tenant.
  const tenants = new TenantsRepo(d.db);
  const everyTenant = () => tenants.list();
  const rules: BackendRules = {
    descriptors: () => d.backends().descriptors(),
    hasDriver: (x) => d.backends().hasDriver(x),
    prepareBackendConfig: (x, raw, old) => d.backends().prepareBackendConfig(x, raw, old),
    maskedConfig: (x, c) => d.backends().maskedConfig(x, c),
    openedConfig: (x, c) => d.backends().openedConfig(x, c),
    buildBackend: (uid, x, c, probe) => d.backends().buildBackend(uid, x, c, probe),
  };
  const targets = new TargetsService(repo, rules, d.unlinkStorages, d.summary, everyTenant);
  const policy = new ReplicaPolicy(repo, d.settings);
  const engine = new ReplicationEngine({
    repo,
    policy,
    targets,
    queue: d.queue,
    bus: d.bus,
    storageTenant: d.storageTenant,
    primary: d.primary,
    log: d.log,
    backoffMs: d.backoffMs,
    timeoutMs: d.timeoutMs,
  });
  engine.register();
  const audit = new ReplicaAudit(repo, engine, d.queue, d.bus, d.settings, everyTenant);
  audit.register();
  const drill = new RestoreDrill(repo, engine, d.queue, d.scratchDir, everyTenant);
  drill.register();
  const repair = new RepairService(
    repo,
    d.queue,
    d.bus,
    d.settings,
    () => audit.last(),
    () => drill.last(),
    everyTenant,
    d.rpoWarnS,
  );
  const decorator = replicationDecorator(engine, targets, d.bus, d.log);
  return {
    targets,
    policy,
    repair,
    engine,
    decorator,
    audit,
    drill,
    /** The catalogue's sync hooks: files added or changed on the backend, and entries gone from it. */
    synced: {
      files: (storageId: number, files: Array<{ path: string }>) =>
        void engine.synced(
          storageId,
          'write',
          files.map((f) => f.path),
        ),
      removed: (storageId: number, paths: string[]) => void engine.synced(storageId, 'delete', paths),
    },
    /** Arms the report, audit and drill schedules, and re-arms them whenever the settings change (server only). */
    schedule(scheduler: Scheduler): void {
      const settings = () => {
        repair.schedule(scheduler, d.log);
        audit.schedule(scheduler, d.log);
        drill.schedule(scheduler, d.settings.get('replica_drill_cron'), d.log);
      };
      settings();
      policy.onChange(settings);
    },
    close: async () => {
      await engine.flush();
      await targets.closeAll();
    },
  };
}

export type Replication = ReturnType<typeof createReplication>;
