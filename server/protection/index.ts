/**
 * Protection: the trash, versions, antivirus scanning, the admin's
 * protection settings and webhook targets. `createProtection` builds the
 * parts and registers the scan op; `scheduleProtection` adds the sweeps. The
 * file service reaches the trash and versions through its ports (deletes go
 * to the trash, overwrites keep a version); the scan policy is created first
 * and handed to the catalogue as a write-gate and sync hook.
 */
import type { Catalogue } from '../catalogue';
import { TenantsRepo, type Db } from '../db';
import type { EventBus } from '../events';
import type { StorageOps } from '../files/internal';
import type { JobQueue, Scheduler } from '../jobs';
import type { SettingsStore } from '../settings';
import { Antivirus } from './antivirus.service';
import type { ScanPolicy } from './scan-policy';
import { ProtectionSettings } from './settings.service';
import { TrashRepo } from './trash.repo';
import { TrashService } from './trash.service';
import { VersionsService } from './versions.service';
import { WebhookTargets } from './webhook-targets';

export { TrashService, TRASH_DIR, type TrashItem, type TrashOutcome, type RestoreResult } from './trash.service';
export { VersionsService, VERSIONS_DIR, DEFAULT_KEEP, type VersionView } from './versions.service';
export { Antivirus, AV_MODES, type AvStatus } from './antivirus.service';
export { ScanPolicy, SCAN_JOB, SYNC_SCAN_PRIORITY, type ScanPayload } from './scan-policy';
export { ClamscanScanner, ClamdScanner, parseAddress, CLAMSCAN_TIMEOUT_MS, type Scanner, type Verdict } from './clamav';
export { ProtectionSettings, PATCH_FIELDS, MAX_SCAN_MB, SAVE_SCAN_WINDOW, type ProtectionView } from './settings.service';
export { WebhookTargets, LEGACY_TARGET_ID, type TargetView, type TargetInput } from './webhook-targets';
export { attachInfectionMail } from './alerts';

export interface ProtectionDeps {
  db: Db;
  catalogue: Catalogue;
  ops: StorageOps;
  queue: JobQueue;
  /** The scan policy the catalogue's hooks already use. */
  scans: ScanPolicy;
  bus: EventBus;
  settings: SettingsStore;
  secretKey: Buffer;
  log: (msg: string, err?: unknown) => void;
  /** Scan op retry tuning (tests shorten it). */
  scanRetry?: { maxAttempts?: number; backoffMs?: number };
}

export function createProtection(d: ProtectionDeps) {
  const tenants = new TenantsRepo(d.db);
  const trash = new TrashService(d.catalogue, d.ops, d.settings, new TrashRepo(d.db), tenants);
  const versions = new VersionsService(d.db, d.catalogue, d.ops, d.settings, tenants);
  const antivirus = new Antivirus({
    db: d.db,
    catalogue: d.catalogue,
    ops: d.ops,
    queue: d.queue,
    policy: d.scans,
    settings: d.settings,
    trash,
    bus: d.bus,
    log: d.log,
    ...d.scanRetry,
  });
  antivirus.register();
  const settings = new ProtectionSettings(d.db, d.settings, antivirus, d.bus);
  const webhooks = new WebhookTargets(d.settings, d.secretKey, d.bus);
  return { trash, versions, antivirus, settings, webhooks };
}

export type Protection = ReturnType<typeof createProtection>;

const HOUR = 3_600_000;

/** Schedules the trash (hourly) and version (daily) sweeps. */
export function scheduleProtection(p: Protection, scheduler: Scheduler, log: (msg: string, err?: unknown) => void): void {
  scheduler.every('trash.sweep', HOUR, async () => void (await p.trash.sweep(Date.now(), log)));
  scheduler.every('versions.sweep', 24 * HOUR, async () => void (await p.versions.sweep(log)));
}
