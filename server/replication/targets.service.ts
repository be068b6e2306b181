/**
 * Replication targets: backup-only backends, configured like storages (any
 * registered driver, the same config rules, sealed secrets read back `***`,
 * probed before save) but never mounted, never in the tree, never reached
 * through the file service. A target at or inside a storage's root (or
 * holding one) is refused: replication into it would loop.
 */
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DriverDescriptor, ReplicaTarget } from '../contract';
import { AppError, validation } from '../errors';
import { newTargetUid, type ReplicationRepo, type TargetRow } from './replication.repo';
import type { RDriver, TargetMode } from './types';

type Config = Record<string, unknown>;

/** The catalogue's config rules for backends that are not storages (StoragesService). */
export interface BackendRules {
  descriptors(): DriverDescriptor[];
  hasDriver(driver: string): boolean;
  prepareBackendConfig(driver: string, raw: unknown, old?: Config): Config;
  maskedConfig(driver: string, stored: Config): Config;
  openedConfig(driver: string, stored: Config): Config;
  buildBackend(uid: string, driver: string, stored: Config, probe?: boolean): Promise<RDriver>;
}

export interface TargetInput {
  name?: string;
  driver?: string;
  config?: unknown;
  mode?: TargetMode;
  enabled?: boolean;
}

export type TargetView = ReplicaTarget;

/** Fields that name the backend itself (the same server, bucket or share); the root field says where in it. */
const IDENTITY = ['host', 'port', 'bucket', 'endpoint', 'share', 'url'];

export class TargetsService {
  private live = new Map<number, Promise<RDriver>>();

  constructor(
    private repo: ReplicationRepo,
    private rules: BackendRules,
    private unlinkStorages: (targetId: number) => number,
    private summary: (driver: string, config: Config) => string,
  ) {}

  view(r: TargetRow): TargetView {
    const masked = this.rules.maskedConfig(r.driver, JSON.parse(r.config) as Config);
    return {
      id: r.id, uid: r.uid, name: r.name, driver: r.driver, config: masked, config_summary: this.summary(r.driver, masked), mode: r.mode,
      enabled: !!r.enabled, storage_ids: this.repo.storages().filter((s) => s.replica_target_id === r.id).map((s) => s.id),
      created_at: r.created_at, updated_at: r.updated_at,
    };
  }

  list(): TargetView[] {
    return this.repo.targets().map((r) => this.view(r));
  }

  get(id: number): TargetView {
    const r = this.repo.target(id);
    if (!r) throw new AppError('not_found');
    return this.view(r);
  }

  /** Creates a target after its config resolves, passes the loop check and its probe (10 s). */
  async create(input: TargetInput): Promise<TargetView> {
    if (input.name === undefined) throw validation('name', 'is required');
    if (input.driver === undefined) throw validation('driver', 'is required');
    const name = this.checkName(input.name);
    const config = this.rules.prepareBackendConfig(input.driver, input.config ?? {});
    this.checkNoLoop(input.driver, config);
    const uid = newTargetUid();
    const built = await this.rules.buildBackend(uid, input.driver, config);
    await built.close().catch(() => {});
    const id = this.repo.insertTarget({ uid, name, driver: input.driver, config: JSON.stringify(config), mode: input.mode ?? 'async', enabled: input.enabled === false ? 0 : 1 });
    return this.get(id);
  }

  /** Partial update; a changed driver or config is resolved, loop-checked and probed again, and the live driver dropped. */
  async update(id: number, input: TargetInput): Promise<TargetView> {
    const r = this.repo.target(id);
    if (!r) throw new AppError('not_found');
    const patch: Parameters<ReplicationRepo['patchTarget']>[1] = {};
    if (input.name !== undefined && input.name !== r.name) patch.name = this.checkName(input.name, id);
    if (input.mode !== undefined) patch.mode = input.mode;
    if (input.enabled !== undefined) patch.enabled = input.enabled ? 1 : 0;
    if (input.config !== undefined || input.driver !== undefined) {
      const driver = input.driver ?? r.driver;
      const old = driver === r.driver ? (JSON.parse(r.config) as Config) : {};
      const config = this.rules.prepareBackendConfig(driver, input.config ?? old, old);
      this.checkNoLoop(driver, config);
      if (driver !== r.driver || JSON.stringify(config) !== r.config) {
        const built = await this.rules.buildBackend(r.uid, driver, config);
        await built.close().catch(() => {});
        patch.driver = driver;
        patch.config = JSON.stringify(config);
      }
    }
    this.repo.patchTarget(id, patch);
    if (patch.driver || patch.config) await this.drop(id);
    return this.get(id);
  }

  /** Deletes the target and unlinks every storage that pointed at it (their failure rows go too); the backup's files stay. */
  async delete(id: number): Promise<{ unlinked: number }> {
    if (!this.repo.target(id)) throw new AppError('not_found');
    this.repo.dropFailuresOfTarget(id);
    const unlinked = this.unlinkStorages(id);
    this.repo.deleteTarget(id);
    await this.drop(id);
    return { unlinked };
  }

  /**
   * The storage link check (asked by the catalogue before a storage saves
   * `replica_target_id`): the target exists and does not overlap the storage.
   */
  checkLink(targetId: number, storage: { driver: string; config: Config }): void {
    const t = this.repo.target(targetId);
    if (!t) throw new AppError('validation_failed', { field: 'replica_target_id', reason: 'no such replication target' }, { field: 'replica_target_id', reason: 'no such replication target' });
    if (this.overlaps(storage.driver, storage.config, t.driver, JSON.parse(t.config) as Config))
      throw new AppError('validation_failed', { field: 'replica_target_id', reason: 'loop' }, { field: 'replica_target_id', reason: 'the target is at, inside or around this storage\'s root: replication would loop' });
  }

  /** The live driver of target `id` (built once, undecorated, not probed). */
  driver(id: number): Promise<RDriver> {
    let d = this.live.get(id);
    if (!d) {
      const r = this.repo.target(id);
      if (!r) return Promise.reject(new AppError('not_found'));
      d = this.rules.buildBackend(r.uid, r.driver, JSON.parse(r.config) as Config, false);
      this.live.set(id, d);
      d.catch(() => this.live.get(id) === d && this.live.delete(id));
    }
    return d;
  }

  /** Drops (and closes) the live driver of target `id`, so the next use builds it fresh. */
  async drop(id: number): Promise<void> {
    const d = this.live.get(id);
    this.live.delete(id);
    if (d) await d.then((x) => x.close(), () => undefined).catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.live.keys()].map((id) => this.drop(id)));
  }

  private checkName(name: string, exceptId?: number): string {
    const n = name.trim();
    if (!n || n.length > 255) throw validation('name', 'must be 1 to 255 characters');
    if (this.repo.targetNameTaken(n, exceptId)) throw new AppError('name_taken', { name: n }, { field: 'name' });
    return n;
  }

  private checkNoLoop(driver: string, stored: Config): void {
    for (const s of this.repo.storages()) {
      if (this.overlaps(s.driver, JSON.parse(s.config) as Config, driver, stored)) {
        const field = `config.${this.rootKey(driver) ?? 'root'}`;
        throw new AppError('validation_failed', { field, reason: 'loop' }, { field, reason: `at, inside or around the root of storage "${s.name}": replication would loop` });
      }
    }
  }

  private rootKey(driver: string): string | undefined {
    return this.rules.descriptors().find((d) => d.driver === driver)?.fields.find((f) => f.root)?.key;
  }

  /** Whether two stored configs address the same backend with nested (or equal) roots. */
  private overlaps(aDriver: string, aStored: Config, bDriver: string, bStored: Config): boolean {
    if (aDriver !== bDriver) return false;
    const key = this.rootKey(aDriver);
    let a: Config, b: Config;
    try {
      a = this.rules.openedConfig(aDriver, aStored);
      b = this.rules.openedConfig(bDriver, bStored);
    } catch {
      return false;
    }
    for (const k of IDENTITY) if (String(a[k] ?? '').toLowerCase() !== String(b[k] ?? '').toLowerCase()) return false;
    if (!key) return JSON.stringify(a) === JSON.stringify(b);
    const norm = (v: unknown) => {
      let p = String(v ?? '');
      if (aDriver === 'local') p = existsSync(p) ? realpathSync(p) : resolve(p);
      return p.split('/').filter((x) => x && x !== '.');
    };
    const ra = norm(a[key]);
    const rb = norm(b[key]);
    const n = Math.min(ra.length, rb.length);
    for (let i = 0; i < n; i++) if (ra[i] !== rb[i]) return false;
    return true;
  }
}
