/**
 * When a file is scanned (spec: Antivirus scanning triggers). The policy only
 * decides and enqueues `av.scan` ops, so it exists before the catalogue and
 * is handed to it as the write gate's and the sync engine's hooks; the scans
 * themselves run in antivirus.service.ts.
 *   - every write through the gate scans at once, except a text-editor save
 *     over an existing file and a document-editor force save (callback status
 *     6): one scan a save-scan window later, further saves within the window
 *     dropped (the op is persisted, so the window survives a restart);
 *   - a file the sync walk finds new or drifted scans at priority -1.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { SyncFilesHook, WriteHook } from '../catalogue';
import type { TenantScope } from '../db';
import type { JobQueue } from '../jobs';
import type { SettingsStore } from '../settings';
import { isInternalPath } from '../lib/paths';

export const SCAN_JOB = 'av.scan';
/** The sync walk's scans wait behind every other op. */
export const SYNC_SCAN_PRIORITY = -1;
const MB = 1024 * 1024;

export interface ScanPayload {
  storage_id: number;
  path: string;
  /** When the write or sync that asked for the scan happened (ISO). */
  at: string;
}

declare module '../jobs/types' {
  interface JobPayloads {
    [SCAN_JOB]: ScanPayload;
  }
}

export class ScanPolicy {
  private clamscan: string | null = null;

  /** `tenantOf`: the tenant of a storage's scan ops (its own), undefined once the storage is gone. */
  constructor(private o: { queue: JobQueue; settings: SettingsStore; tenantOf: (storageId: number) => TenantScope | undefined }) {}

  /** Scanning is switched on and the chosen mode has what it needs (no live probe). */
  get active(): boolean {
    const s = this.o.settings;
    if (!s.get('av_enabled')) return false;
    return s.get('av_mode') === 'daemon' ? s.get('av_clamd_addr') !== '' : this.binaryPath() !== '';
  }

  /**
   * Whether a file is worth scanning: folders, empty files, files over
   * `av_max_scan_mb` and anything under a service folder are not.
   */
  eligible(rel: string, type: 'file' | 'dir', size: number): boolean {
    return type === 'file' && size > 0 && size <= this.o.settings.get('av_max_scan_mb') * MB && !isInternalPath(rel);
  }

  /**
   * Queues a scan of one file. `delayMs` schedules it later (the save-scan
   * window); `key` collapses requests while one is queued. Returns the op id,
   * or null when scanning is off or the storage is gone.
   */
  async enqueue(storageId: number, rel: string, o: { priority?: number; delayMs?: number; key: string }): Promise<string | null> {
    const tenant = this.o.tenantOf(storageId);
    if (!this.active || !tenant) return null;
    const at = new Date();
    return this.o.queue.enqueue(
      SCAN_JOB,
      { storage_id: storageId, path: rel, at: at.toISOString() },
      {
        tenant,
        priority: o.priority ?? 0,
        dedupKey: o.key,
        runAt: o.delayMs ? new Date(at.getTime() + o.delayMs) : undefined,
      },
    );
  }

  /** The write-gate hook. Content-keyed dedup lets a new write queue a new scan even while an older one runs. */
  writeHook(): WriteHook {
    return async (node, info) => {
      if (!this.eligible(node.path, node.type, node.size)) return;
      // A document-editor force save (status 6) is interim, like a text-editor save; its final save (2) scans at once.
      const interim = (info.origin === 'save-text' || (info.origin === 'docserver' && info.meta?.status === 6)) && !info.created;
      if (interim) {
        const delayMs = this.o.settings.get('av_save_scan_window_minutes') * 60_000;
        await this.enqueue(node.storage_id, node.path, { delayMs, key: `av:window:${node.storage_id}:${node.path}` });
        return;
      }
      await this.enqueue(node.storage_id, node.path, { key: contentKey(node.storage_id, node) });
    };
  }

  /** The sync engine's hook: newly catalogued or drifted files, at priority -1. */
  syncHook(): SyncFilesHook {
    return async (storageId, files) => {
      if (!this.active) return; // a sync of 200,000 files must cost nothing while scanning is off
      const tenant = this.o.tenantOf(storageId);
      if (!tenant) return;
      const at = new Date().toISOString();
      // One unit for the batch's scans, not one awaited enqueue per file.
      await this.o.queue.enqueueAll(
        SCAN_JOB,
        files
          .filter((f) => this.eligible(f.path, 'file', f.size))
          .map((f) => ({
            payload: { storage_id: storageId, path: f.path, at },
            o: { tenant, priority: SYNC_SCAN_PRIORITY, dedupKey: contentKey(storageId, f) },
          })),
      );
    };
  }

  /** Absolute path of clamscan on PATH, '' when missing (looked up once). */
  binaryPath(): string {
    if (this.clamscan === null) {
      this.clamscan = '';
      for (const dir of (process.env.PATH ?? '').split(delimiter)) {
        try {
          accessSync(join(dir, 'clamscan'), constants.X_OK);
          this.clamscan = join(dir, 'clamscan');
          break;
        } catch {
          /* not here */
        }
      }
    }
    return this.clamscan;
  }
}

/** One scan per path and content: a new write queues a new scan even while an older one runs. */
const contentKey = (storageId: number, f: { path: string; etag: string | null; size: number; mtime: number }) =>
  `av:${storageId}:${f.path}:${f.etag ?? ''}:${f.size}:${f.mtime}`;
