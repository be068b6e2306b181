/**
 * Antivirus scanning. Every write through the gate and every new or drifted
 * file the sync walk finds enqueues an `av.scan` op (never blocking the
 * write); the op scans with the mode the settings name at that moment, so
 * setting changes apply without a restart. Outcomes (spec: Antivirus scan
 * outcome): clean → recorded; infected → moved into `.service-trash/`, row
 * gone from the catalogue, `file.infected` emitted; scan error → the op
 * throws and the queue retries, the file stays and is never marked clean.
 * An outcome is recorded in the scanned file's storage's tenant (docs/tenants.md).
 */
import type { Catalogue } from '../catalogue';
import type { Db, TenantScope } from '../db';
import type { EventBus } from '../events';
import type { StorageOps } from '../files/internal';
import type { JobContext, JobQueue } from '../jobs';
import type { SettingsStore } from '../settings';
import { baseName, uiPath } from '../lib/paths';
import { ClamdScanner, ClamscanScanner, type Probe, type Scanner } from './clamav';
import { SCAN_JOB, type ScanPayload, type ScanPolicy } from './scan-policy';
import type { TrashService } from './trash.service';
import { AvScansRepo, type AvScanRow } from './av-scans.repo';

export const AV_MODES = ['binary', 'daemon'] as const;

export interface AvStatus {
  enabled: boolean;
  binary: string;
  mode: 'binary' | 'daemon';
  address: string;
  reachable: boolean;
  health: string;
  version: string;
  restart_pending: boolean;
}

export interface AntivirusOptions {
  db: Db;
  catalogue: Catalogue;
  ops: StorageOps;
  queue: JobQueue;
  settings: SettingsStore;
  policy: ScanPolicy;
  trash: TrashService;
  bus: EventBus;
  log: (msg: string, err?: unknown) => void;
  /** Attempts of one scan op and the base of its backoff (defaults 5 and 30 s). */
  maxAttempts?: number;
  backoffMs?: number;
}

export class Antivirus {
  private scans: AvScansRepo;
  /** Scans recorded by this process since it started, per outcome (clean, infected, error, skipped; the metrics read them). */
  readonly outcomes = new Map<string, number>();

  constructor(private o: AntivirusOptions) {
    this.scans = new AvScansRepo(o.db);
  }

  /** Registers the scan op kind. */
  register(): void {
    this.o.queue.register(SCAN_JOB, (ctx) => this.run(ctx), {
      concurrency: 2,
      maxAttempts: this.o.maxAttempts ?? 5,
      backoffMs: this.o.backoffMs ?? 30_000,
      timeoutMs: 120_000,
      governed: 'lane',
    });
  }

  /** Scanning is switched on and the chosen mode has what it needs (no live probe). */
  get active(): boolean {
    return this.o.policy.active;
  }

  get mode(): 'binary' | 'daemon' {
    return this.o.settings.get('av_mode');
  }

  /** Queues a scan of one file (see ScanPolicy.enqueue). */
  enqueue(storageId: number, rel: string, o: { priority?: number; delayMs?: number; key: string }): Promise<string | null> {
    return this.o.policy.enqueue(storageId, rel, o);
  }

  /** The status half of the admin view, with a live probe of the configured engine. */
  async status(): Promise<AvStatus> {
    const mode = this.mode;
    const address = mode === 'daemon' ? this.o.settings.get('av_clamd_addr') : '';
    const base = { enabled: this.active, binary: this.binaryPath(), mode, address, restart_pending: false };
    let probe: Probe;
    if (mode === 'daemon' && !address) probe = { reachable: false, version: '', health: 'no clamd address is set' };
    else if (mode === 'binary' && !base.binary) probe = { reachable: false, version: '', health: 'clamscan is not installed (apt-get install clamav)' };
    else {
      try {
        probe = await this.scanner().probe();
      } catch (e) {
        probe = { reachable: false, version: '', health: e instanceof Error ? e.message : String(e) };
      }
    }
    return { ...base, ...probe };
  }

  /** The scanner the current settings describe. */
  scanner(): Scanner {
    const s = this.o.settings;
    if (s.get('av_mode') === 'daemon') return new ClamdScanner({ address: s.get('av_clamd_addr') });
    return new ClamscanScanner({ bin: this.binaryPath() || 'clamscan', database: s.get('av_database'), maxMb: s.get('av_max_scan_mb') });
  }

  /** Absolute path of clamscan on PATH, '' when missing. */
  binaryPath(): string {
    return this.o.policy.binaryPath();
  }

  private async run(ctx: JobContext<ScanPayload>): Promise<unknown> {
    const { storage_id: storageId, path: rel, at } = ctx.payload;
    if (!this.o.settings.get('av_enabled')) return { skipped: 'disabled' };
    // The outcome is its storage's tenant's; a storage removed before the scan's turn leaves nothing to scan.
    const tenant = this.o.catalogue.repo.ofAnyTenant(storageId);
    if (!tenant) return { skipped: 'gone' };
    const place = { storage_id: storageId, rel };
    // Ciphertext (docs/vault.md): nothing a scanner could judge; the state says why it was not scanned.
    if (this.o.catalogue.roots.rootOf(storageId, rel)) {
      await this.save(tenant, storageId, rel, 'skipped', null, 'encrypted', at);
      return { skipped: 'encrypted' };
    }
    const entry = await this.o.ops.statOrNull(place);
    // A file that vanished (or turned into something ineligible) before its turn is not an error.
    if (!entry || !this.o.policy.eligible(rel, entry.type, entry.size)) {
      await this.save(tenant, storageId, rel, 'skipped', null, entry ? 'not eligible' : 'gone before the scan', at);
      return { skipped: entry ? 'ineligible' : 'gone' };
    }
    let verdict;
    try {
      const localPath = (await this.o.ops.localFile(place)) ?? undefined;
      verdict = await this.scanner().scan({ localPath, open: () => this.o.ops.read(place, undefined, ctx.signal) }, ctx.signal);
    } catch (e) {
      // Deleted between the stat and the read: as gone as a file that vanished before its turn. Recording
      // an error would retry a scan of nothing, with a backoff, and leave the op queued for minutes.
      if (
        !ctx.signal.aborted &&
        (await this.o.ops.statOrNull(place).then(
          (x) => x === null,
          () => false,
        ))
      ) {
        await this.save(tenant, storageId, rel, 'skipped', null, 'gone during the scan', at);
        return { skipped: 'gone' };
      }
      await this.save(tenant, storageId, rel, 'error', null, e instanceof Error ? e.message : String(e), at);
      throw e;
    }
    if (!verdict.infected) {
      await this.save(tenant, storageId, rel, 'clean', null, null, at);
      return { clean: true };
    }
    return this.quarantine(tenant, storageId, rel, entry.size, verdict.signature, at);
  }

  /** Moves an infected file into the trash (or leaves it when the driver cannot rename) and announces it. */
  private async quarantine(tenant: TenantScope, storageId: number, rel: string, size: number, signature: string, at: string): Promise<unknown> {
    const out = await this.o.trash.moveToTrash({ storage_id: storageId, rel }, null, { reason: 'infected', permanentFallback: false });
    await this.save(
      tenant,
      storageId,
      rel,
      'infected',
      signature,
      out.trashed ? `quarantined at ${out.trashRel}` : 'left in place: the storage cannot rename',
      at,
    );
    const storage = this.o.catalogue.repo.ofAnyTenant(storageId)?.name ?? String(storageId);
    const name = baseName(rel);
    await this.o.bus.emit(tenant, 'file.infected', {
      event: 'file.infected',
      severity: 'warning',
      title: `Infected file: ${name}`,
      body: `${uiPath(storage, rel)} contains ${signature}. ${out.trashed ? 'It was moved to the trash.' : 'It could not be moved and is still in place.'}`,
      node: { storage_id: storageId, path: uiPath(storage, rel), name, size },
      meta: { signature, quarantined: out.trashed, trash_path: out.trashed ? out.trashRel : '' },
    });
    return { infected: true, signature, quarantined: out.trashed };
  }

  private async save(
    tenant: TenantScope,
    storageId: number,
    rel: string,
    state: AvScanRow['state'],
    signature: string | null,
    detail: string | null,
    writtenAt: string,
  ): Promise<void> {
    await this.scans.record(tenant, {
      storage_id: storageId,
      path: rel,
      state,
      signature,
      detail,
      written_at: writtenAt,
      scanned_at: new Date().toISOString(),
    });
    this.outcomes.set(state, (this.outcomes.get(state) ?? 0) + 1);
  }
}
