/**
 * Removable and flaky drives (docs/desktop.md, "Removable drives"). A local
 * storage records the identity of the volume under its folder when it is
 * first probed; every few seconds (a timer, never on a request) each one is
 * checked: a stat of the folder and the identity of the filesystem holding it.
 *
 * - Volume gone (folder missing, or the path now belongs to another
 *   filesystem such as the parent mount): the storage is `offline`. The
 *   driver pool refuses it (`storage_unavailable`), so listings come from the
 *   catalogue alone, writes and public links are refused, and no sync or
 *   folder check can remove a row.
 * - The same volume mounted elsewhere: the storage re-attaches there (its
 *   path is updated, a fresh driver installed, a catch-up sync queued); the
 *   rows are untouched, so no thumbnail is made again.
 * - Another volume at the recorded mount point: never attached; the reason
 *   says so and `storage.volume_mismatch` is announced.
 */
import { promises as fsp } from 'node:fs';
import { dirname } from 'node:path';
import type { StorageVolume } from '../contract';
import { AppError } from '../errors';
import type { EventBus } from '../events';
import type { Logger } from '../lib/log';
import type { MountedVolume, VolumeProbe } from '../storage';
import type { DriverPool } from './driver-pool';
import type { StorageRow, StoragesRepo } from './storages.repo';

/** What the catalogue keeps in `storages.volume` (JSON). `id` null: the filesystem has no identity, so it is not watched. */
export type RecordedVolume = StorageVolume;

/** An offline storage as the admin status and the tray show it. */
export interface OfflineStorage {
  storage_id: number;
  name: string;
  path: string;
  reason: string | null;
  /** `missing`: the volume is not mounted; `foreign`: another volume sits at its mount point; null: not a volume problem (an unreachable backend). */
  volume_state: 'missing' | 'foreign' | null;
  volume_id: string | null;
}

type Verdict = { state: 'attached' } | { state: 'missing' | 'foreign'; reason: string; foreignId?: string | null };

/** The part of the syncer this needs: stop a storage's background work, start it again, ask for a catch-up sync. */
export interface VolumeSyncControl {
  stop(id: number): Promise<void>;
  restart(id: number): Promise<void>;
  requestSync(id: number): Promise<number>;
}

const isDir = (p: string) =>
  fsp.stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );

/** The nearest folder at or above `p` that exists (what the filesystem at that path is, while the folder is gone). */
async function nearestExisting(p: string): Promise<string> {
  let cur = p;
  while (!(await isDir(cur)) && dirname(cur) !== cur) cur = dirname(cur);
  return cur;
}

const sameId = (a: string | null | undefined, b: string | null) => !!a && !!b && a.toLowerCase() === b.toLowerCase();

export class VolumeWatch {
  /** Storages held offline by a volume problem, with why. */
  private down = new Map<number, { reason: string; state: 'missing' | 'foreign'; foreignId?: string | null }>();
  /** One check per storage at a time (the timer and a sync's removal check may meet). */
  private inflight = new Map<number, Promise<void>>();
  /** Storages checked since start: a stale `offline` left by the last run is cleared at the first good check. */
  private checked = new Set<number>();
  private toolFailed = new Set<number>();
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;

  constructor(
    private repo: StoragesRepo,
    private pool: DriverPool,
    private sync: VolumeSyncControl,
    private bus: EventBus,
    private log: Logger,
    private probe: VolumeProbe | null,
  ) {}

  /** Why storage `id` must not be touched now (its volume is gone or foreign), or null. */
  blocked(id: number): string | null {
    return this.down.get(id)?.reason ?? null;
  }

  /** Checks every local storage now, then every `intervalMs` (0: only now). */
  async start(intervalMs: number): Promise<void> {
    if (!this.probe) return;
    await this.tick();
    if (intervalMs > 0) this.timer = setInterval(() => void this.tick().catch((e) => this.log.warn('volume check pass failed', e)), intervalMs).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass over the local storages (a pass still running is joined, not doubled). */
  tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    const pass = (async () => {
      const watched = this.repo.everyTenant().filter((r) => r.enabled && r.driver === 'local');
      // A storage removed, disabled or given another driver is no longer held.
      for (const id of this.down.keys()) if (!watched.some((r) => r.id === id)) this.down.delete(id);
      for (const row of watched) await this.check(row.id);
    })();
    this.ticking = pass.finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  /**
   * Before the catalogue removes rows of storage `id` (a sync's delete pass, a folder check): looks at its
   * volume now and throws `storage_unavailable` when it is not the recorded one, so an unmounted drive
   * whose empty mount point was listed in the seconds before the timer noticed cannot empty the catalogue.
   */
  async verify(id: number): Promise<void> {
    const row = this.repo.ofAnyTenant(id);
    if (!this.probe || !row || row.driver !== 'local') return;
    // A check already running may have looked before the listing that asks: its verdict is stale. The one
    // joined after it started after this call, so it sees the volume as the listing did or later.
    await this.inflight.get(id);
    await this.check(id);
    const why = this.blocked(id);
    if (why) throw new AppError('storage_unavailable', { reason: why });
  }

  /** Every enabled storage that is offline now, with the volume's side of it when that is the cause. */
  offline(): OfflineStorage[] {
    return this.repo
      .everyTenant()
      .filter((r) => r.enabled && r.status === 'offline')
      .map((r) => {
        const d = this.down.get(r.id);
        return { storage_id: r.id, name: r.name, path: pathOf(r), reason: r.status_reason, volume_state: d?.state ?? null, volume_id: recorded(r)?.id ?? null };
      });
  }

  private check(id: number): Promise<void> {
    const running = this.inflight.get(id);
    if (running) return running;
    const p = this.checkNow(id).finally(() => this.inflight.delete(id));
    this.inflight.set(id, p);
    return p;
  }

  private async checkNow(id: number): Promise<void> {
    const row = this.repo.ofAnyTenant(id);
    if (!row || !this.probe) return;
    const rec = recorded(row);
    try {
      if (!rec) {
        // Pointed elsewhere by an admin (the save cleared the record): whatever held it applied to the old place.
        if (this.down.delete(id)) await this.repo.setStatus(row, id, 'online', null);
        return await this.record(row);
      }
      if (rec.id === null) return;
      const verdict = await this.inspect(pathOf(row), rec);
      this.toolFailed.delete(id);
      if (verdict.state === 'attached') return await this.attached(row);
      await this.detached(row, verdict);
      await this.reattach(row, rec);
    } catch (e) {
      // The OS tool failed (missing, timed out): the state stays as it was; said once per storage.
      if (!this.toolFailed.has(id)) this.log.warn(`volume check of storage ${row.name} failed`, e);
      this.toolFailed.add(id);
    } finally {
      this.checked.add(id);
    }
  }

  /** First probe of a storage: the volume under its folder (when the folder exists). */
  private async record(row: StorageRow): Promise<void> {
    const path = pathOf(row);
    if (!(await isDir(path))) return;
    const at = await this.probe!.at(path);
    const rec: RecordedVolume = { kind: this.probe!.kind, id: at.id, mount: at.mount, sub: this.probe!.relative(at.mount, path), source: at.source };
    await this.repo.update(row, row.id, { volume: JSON.stringify(rec) });
    if (at.id) this.log.info(`storage ${row.name} lives on volume ${at.id} (${at.source} at ${at.mount})`);
  }

  private async inspect(path: string, rec: RecordedVolume): Promise<Verdict> {
    const at = await this.probe!.at(await nearestExisting(path));
    // The right volume: a folder deleted on it is the driver's matter (storage_unavailable, the syncer's offline), as on any disk.
    if (sameId(at.id, rec.id)) return { state: 'attached' };
    if (at.mount === rec.mount && at.mount !== dirname(at.mount))
      return {
        state: 'foreign',
        foreignId: at.id,
        reason: `a different volume (${at.id ?? 'without an identity'}, ${at.source}) is mounted at ${rec.mount} where volume ${rec.id} was: not attached, nothing is synced over it`,
      };
    return { state: 'missing', reason: `volume ${rec.id} (${rec.source}) is not mounted at ${rec.mount}; the storage is offline until it comes back` };
  }

  private async attached(row: StorageRow): Promise<void> {
    const was = this.down.get(row.id);
    if (was) {
      await this.back(row, null);
    } else if (!this.checked.has(row.id) && row.status === 'offline') {
      // Left offline by the previous run; the syncer marks it again if the backend itself fails.
      await this.repo.setStatus(row, row.id, 'online', null);
    }
  }

  private async detached(row: StorageRow, v: Exclude<Verdict, { state: 'attached' }>): Promise<void> {
    const was = this.down.get(row.id);
    this.down.set(row.id, { reason: v.reason, state: v.state, foreignId: v.foreignId });
    await this.repo.setStatus(row, row.id, 'offline', v.reason);
    if (!was) {
      this.log.warn(`storage ${row.name} is offline: ${v.reason}`);
      await this.sync.stop(row.id);
      await this.bus.emit(row, 'storage.offline', { storage_id: row.id, name: row.name, path: pathOf(row), reason: v.reason });
    }
    if (v.state === 'foreign' && (was?.state !== 'foreign' || was.foreignId !== v.foreignId)) {
      this.log.warn(`storage ${row.name}: ${v.reason}`);
      await this.bus.emit(row, 'storage.volume_mismatch', {
        storage_id: row.id,
        name: row.name,
        path: pathOf(row),
        expected: recorded(row)?.id ?? '',
        found: v.foreignId ?? null,
        reason: v.reason,
      });
    }
  }

  /** Looks for the recorded volume at other mount points; re-attaches the storage to the first that holds its folder. */
  private async reattach(row: StorageRow, rec: RecordedVolume): Promise<void> {
    const here = pathOf(row).replace(/(.)[\\/]+$/, '$1');
    for (const m of await this.probe!.mountsOf(rec.id!)) {
      const path = this.probe!.join(m.mount, rec.sub);
      if (path === here || !(await isDir(path))) continue;
      await this.moveTo(row, path, m, rec);
      return;
    }
  }

  private async moveTo(row: StorageRow, path: string, m: MountedVolume, rec: RecordedVolume): Promise<void> {
    const from = pathOf(row);
    await this.pool.serial(row.id, async () => {
      const fresh = this.repo.ofAnyTenant(row.id);
      if (!fresh) return;
      const config = { ...(JSON.parse(fresh.config) as Record<string, unknown>), path };
      const driver = await this.pool.manager.build({ uid: fresh.uid, driver: fresh.driver, config });
      await this.repo.update(row, row.id, { config: JSON.stringify(config), volume: JSON.stringify({ ...rec, mount: m.mount, source: m.source }) });
      await this.pool.manager.install(row.id, driver);
    });
    this.log.info(`storage ${row.name} re-attached: volume ${rec.id} is now mounted at ${m.mount} (was ${rec.mount})`);
    await this.bus.emit(row, 'audit', { action: 'storage.reattach', resource: `storage:${row.id}`, meta: { name: row.name, volume: rec.id, from, to: path } });
    await this.back(row, from);
  }

  /** Online again (same place, or re-attached from `from`): background work restarts and a catch-up sync is queued. */
  private async back(row: StorageRow, from: string | null): Promise<void> {
    this.down.delete(row.id);
    await this.repo.setStatus(row, row.id, 'online', null);
    // The notice goes out with the status, before the watcher restarts (slow on a big tree): whoever sees
    // the storage online also finds its notice in the bell.
    const now = this.repo.ofAnyTenant(row.id) ?? row;
    await this.bus.emit(row, 'storage.online', { storage_id: row.id, name: row.name, path: pathOf(now), ...(from ? { reattached_from: from } : {}) });
    await this.sync.restart(row.id);
    await this.sync.requestSync(row.id);
  }
}

function pathOf(r: StorageRow): string {
  const c = JSON.parse(r.config) as { path?: unknown; root?: unknown };
  return String(c.path ?? c.root ?? '');
}

function recorded(r: StorageRow): RecordedVolume | null {
  if (!r.volume) return null;
  try {
    return JSON.parse(r.volume) as RecordedVolume;
  } catch {
    return null;
  }
}
