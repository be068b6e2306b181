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
import type { TenantScope } from '../db';
import { AppError, validation } from '../errors';
import { newTargetUid, type Among, type ReplicationRepo, type TargetRow } from './replication.repo';
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

const nameTaken = (name: string) => new AppError('name_taken', { name }, { field: 'name' });

/** Fields that name the backend itself (the same server, bucket or share); the root field says where in it. */
const IDENTITY = ['host', 'port', 'bucket', 'endpoint', 'share', 'url'];

export class TargetsService {
  /** Live target drivers by target id, with the target's tenant. */
  private live = new Map<number, { tenant: number; d: Promise<RDriver> }>();

  constructor(
    private repo: ReplicationRepo,
    private rules: BackendRules,
    private unlinkStorages: (s: TenantScope, targetId: number) => Promise<number>,
    private summary: (driver: string, config: Config) => string,
    /** Every tenant (the loop check compares a target with every tenant's storages). */
    private everyTenant: () => Promise<Among>,
  ) {}

  /** `storages`: the target's tenant's storages (the ones linked to `r` are listed). */
  private view(r: TargetRow, storages: Array<{ id: number; replica_target_id: number | null }>): TargetView {
    const masked = this.rules.maskedConfig(r.driver, JSON.parse(r.config) as Config);
    return {
      id: r.id,
      uid: r.uid,
      name: r.name,
      driver: r.driver,
      config: masked,
      config_summary: this.summary(r.driver, masked),
      mode: r.mode,
      enabled: !!r.enabled,
      storage_ids: storages.filter((s) => s.replica_target_id === r.id).map((s) => s.id),
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
  }

  /** The tenant's targets. */
  async list(s: TenantScope): Promise<TargetView[]> {
    const [targets, storages] = await Promise.all([this.repo.targets([s]), this.repo.storages([s])]);
    return targets.map((r) => this.view(r, storages));
  }

  /** The tenant's target `id`; another tenant's is `not_found` like a missing one. */
  async get(s: TenantScope, id: number): Promise<TargetView> {
    const [r, storages] = await Promise.all([this.repo.target(s, id), this.repo.storages([s])]);
    if (!r) throw new AppError('not_found');
    return this.view(r, storages);
  }

  /** Creates a target of the tenant after its config resolves, passes the loop check and its probe (10 s). */
  async create(s: TenantScope, input: TargetInput): Promise<TargetView> {
    if (input.name === undefined) throw validation('name', 'is required');
    if (input.driver === undefined) throw validation('driver', 'is required');
    const name = await this.checkName(s, input.name);
    const config = this.rules.prepareBackendConfig(input.driver, input.config ?? {});
    await this.checkNoLoop(s, input.driver, config);
    const uid = newTargetUid();
    const built = await this.rules.buildBackend(uid, input.driver, config);
    await built.close().catch(() => {});
    // The name is checked again with the insert: another create may have taken it during the probe.
    const id = await this.repo.insertTarget(s, {
      uid,
      name,
      driver: input.driver,
      config: JSON.stringify(config),
      mode: input.mode ?? 'async',
      enabled: input.enabled === false ? 0 : 1,
    });
    if (id === 'name_taken') throw nameTaken(name);
    return this.get(s, id);
  }

  /** Partial update; a changed driver or config is resolved, loop-checked and probed again, and the live driver dropped. */
  async update(s: TenantScope, id: number, input: TargetInput): Promise<TargetView> {
    const r = await this.repo.target(s, id);
    if (!r) throw new AppError('not_found');
    const patch: Parameters<ReplicationRepo['patchTarget']>[2] = {};
    if (input.name !== undefined && input.name !== r.name) patch.name = await this.checkName(s, input.name, id);
    if (input.mode !== undefined) patch.mode = input.mode;
    if (input.enabled !== undefined) patch.enabled = input.enabled ? 1 : 0;
    if (input.config !== undefined || input.driver !== undefined) {
      const driver = input.driver ?? r.driver;
      const old = driver === r.driver ? (JSON.parse(r.config) as Config) : {};
      const config = this.rules.prepareBackendConfig(driver, input.config ?? old, old);
      await this.checkNoLoop(s, driver, config);
      if (driver !== r.driver || JSON.stringify(config) !== r.config) {
        const built = await this.rules.buildBackend(r.uid, driver, config);
        await built.close().catch(() => {});
        patch.driver = driver;
        patch.config = JSON.stringify(config);
      }
    }
    const done = await this.repo.patchTarget(s, id, patch);
    if (done === 'name_taken') throw nameTaken(patch.name!);
    if (!done) throw new AppError('not_found');
    if (patch.driver || patch.config) await this.drop(id);
    return this.get(s, id);
  }

  /** Deletes the target and unlinks every storage that pointed at it (their failure rows go too); the backup's files stay. */
  async delete(s: TenantScope, id: number): Promise<{ unlinked: number }> {
    if (!(await this.repo.target(s, id))) throw new AppError('not_found');
    await this.repo.dropFailuresOfTarget(s, id);
    const unlinked = await this.unlinkStorages(s, id);
    // Two deletes racing: the second finds nothing left to delete.
    if (!(await this.repo.deleteTarget(s, id))) throw new AppError('not_found');
    await this.drop(id);
    return { unlinked };
  }

  /**
   * The storage link check (asked by the catalogue before a storage saves
   * `replica_target_id`): the target exists in the storage's tenant (another tenant's is "no such
   * replication target", as a missing one) and does not overlap the storage.
   */
  async checkLink(targetId: number, storage: TenantScope & { driver: string; config: Config }): Promise<void> {
    const t = await this.repo.target(storage, targetId);
    if (!t)
      throw new AppError(
        'validation_failed',
        { field: 'replica_target_id', reason: 'no such replication target' },
        { field: 'replica_target_id', reason: 'no such replication target' },
      );
    if (this.overlaps(storage.driver, storage.config, t.driver, JSON.parse(t.config) as Config))
      throw new AppError(
        'validation_failed',
        { field: 'replica_target_id', reason: 'loop' },
        { field: 'replica_target_id', reason: "the target is at, inside or around this storage's root: replication would loop" },
      );
  }

  /** The live driver of tenant `s`'s target `id` (built once, undecorated, not probed); `not_found` when it is not the tenant's. */
  driver(s: TenantScope, id: number): Promise<RDriver> {
    const hit = this.live.get(id);
    // A target id is the installation's: a driver built for one tenant's target is no other tenant's.
    if (hit) return hit.tenant === s.tenant_id ? hit.d : Promise.reject(new AppError('not_found'));
    // Kept before the read, so callers at once share one build.
    const d = this.repo
      .target(s, id)
      .then((r) => (r ? this.rules.buildBackend(r.uid, r.driver, JSON.parse(r.config) as Config, false) : Promise.reject(new AppError('not_found'))));
    this.live.set(id, { tenant: s.tenant_id, d });
    d.catch(() => this.live.get(id)?.d === d && this.live.delete(id));
    return d;
  }

  /** Drops (and closes) the live driver of target `id`, so the next use builds it fresh. */
  async drop(id: number): Promise<void> {
    const d = this.live.get(id)?.d;
    this.live.delete(id);
    if (d)
      await d
        .then(
          (x) => x.close(),
          () => undefined,
        )
        .catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.live.keys()].map((id) => this.drop(id)));
  }

  private async checkName(s: TenantScope, name: string, exceptId?: number): Promise<string> {
    const n = name.trim();
    if (!n || n.length > 255) throw validation('name', 'must be 1 to 255 characters');
    if (await this.repo.targetNameTaken(s, n, exceptId)) throw nameTaken(n);
    return n;
  }

  /**
   * Refuses a target at, inside or around any storage's root, whatever its tenant: a copy there would loop, or
   * write into another tenant's storage. Only the admin's own storage is named (another tenant's name is theirs).
   */
  private async checkNoLoop(scope: TenantScope, driver: string, stored: Config): Promise<void> {
    for (const s of await this.repo.storages(await this.everyTenant())) {
      if (this.overlaps(s.driver, JSON.parse(s.config) as Config, driver, stored)) {
        const field = `config.${this.rootKey(driver) ?? 'root'}`;
        const what = s.tenant_id === scope.tenant_id ? `the root of storage "${s.name}"` : "another storage's root";
        throw new AppError('validation_failed', { field, reason: 'loop' }, { field, reason: `at, inside or around ${what}: replication would loop` });
      }
    }
  }

  private rootKey(driver: string): string | undefined {
    return this.rules
      .descriptors()
      .find((d) => d.driver === driver)
      ?.fields.find((f) => f.root)?.key;
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
