/**
 * Protection: the trash, versions, antivirus scanning, the admin's
 * protection settings and webhook targets. `createProtection` builds the
 * parts; `attachProtection` registers the ops, the write-gate hook and the
 * sweeps. Other modules reach it through this face: deletes call
 * `trash.moveToTrash`, overwrites call `versions.snapshotBeforeOverwrite`.
 */
import type { Catalogue } from '../catalogue';
import type { Db } from '../db';
import type { EventBus } from '../events';
import type { JobQueue, Scheduler } from '../jobs';
import type { SettingsStore } from '../settings';
import { Antivirus } from './antivirus.service';
import { ProtectionSettings } from './settings.service';
import { TrashRepo } from './trash.repo';
import { TrashService } from './trash.service';
import { VersionsService } from './versions.service';
import { WebhookTargets } from './webhook-targets';

export { TrashService, TRASH_DIR, type TrashItem, type TrashOutcome, type RestoreResult } from './trash.service';
export { VersionsService, VERSIONS_DIR, DEFAULT_KEEP, type VersionView } from './versions.service';
export { Antivirus, SCAN_JOB, AV_MODES, SYNC_SCAN_PRIORITY, type AvStatus, type ScanPayload } from './antivirus.service';
export { ClamscanScanner, ClamdScanner, parseAddress, CLAMSCAN_TIMEOUT_MS, type Scanner, type Verdict } from './clamav';
export { ProtectionSettings, PATCH_FIELDS, MAX_SCAN_MB, SAVE_SCAN_WINDOW, type ProtectionView } from './settings.service';
export { WebhookTargets, LEGACY_TARGET_ID, type TargetView, type TargetInput } from './webhook-targets';
export { attachInfectionMail } from './alerts';

export interface ProtectionDeps {
  db: Db;
  catalogue: Catalogue;
  queue: JobQueue;
  bus: EventBus;
  settings: SettingsStore;
  secretKey: Buffer;
  log: (msg: string, err?: unknown) => void;
  /** Scan op retry tuning (tests shorten it). */
  scanRetry?: { maxAttempts?: number; backoffMs?: number };
}

export function createProtection(d: ProtectionDeps) {
  const trash = new TrashService(d.catalogue, d.settings, new TrashRepo(d.db));
  const versions = new VersionsService(d.db, d.catalogue, d.settings);
  const antivirus = new Antivirus({ db: d.db, catalogue: d.catalogue, queue: d.queue, settings: d.settings, trash, bus: d.bus, log: d.log, ...d.scanRetry });
  const settings = new ProtectionSettings(d.db, d.settings, antivirus, d.bus);
  const webhooks = new WebhookTargets(d.settings, d.secretKey, d.bus);
  return { trash, versions, antivirus, settings, webhooks };
}

export type Protection = ReturnType<typeof createProtection>;

const HOUR = 3_600_000;

/** Registers the scan op and the gate hook, and schedules the trash (hourly) and version (daily) sweeps. */
export function attachProtection(p: Protection, catalogue: Catalogue, scheduler: Scheduler, log: (msg: string, err?: unknown) => void): void {
  p.antivirus.register();
  catalogue.gate.addHook('antivirus', p.antivirus.writeHook());
  scheduler.every('trash.sweep', HOUR, async () => void (await p.trash.sweep(Date.now(), log)));
  scheduler.every('versions.sweep', 24 * HOUR, async () => void (await p.versions.sweep(log)));
}
