/**
 * Admin storage management. Saving builds and probes the new driver (10 s
 * bound) before it commits, then swaps it in and restarts the syncer, so the
 * running process never serves a half-saved storage. Saves of one storage
 * are serialised.
 */
import type { AdminStorage, DriverDescriptor, StorageVolume, SyncMode } from '../contract';
import { AppError, validation } from '../errors';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import { checkName } from '../lib/paths';
import type { EventBus, ActorRef, RequestMeta } from '../events';
import {
  MASK,
  maskSecrets,
  mergeForUpdate,
  openSecrets,
  resolveConfig,
  sealSecrets,
  type DriverRegistry,
  type ProbeResult,
  type StorageConfig,
  type StorageDriver,
} from '../storage';
import type { DriverPool } from './driver-pool';
import { newUid, type StorageRow, type StoragesRepo } from './storages.repo';
import { crossTenantRootIssue } from './tenant-roots';

export type { SyncMode };
export const SYNC_MODES: readonly SyncMode[] = ['poll', 'fsnotify', 'ondemand'];
export const DEFAULT_INTERVAL_S = 900;

export interface StorageInput {
  name?: string;
  driver?: string;
  config?: unknown;
  mount_path?: string;
  sync_mode?: string;
  sync_interval_s?: number;
  enabled?: boolean;
  read_only?: boolean;
  rbac_enabled?: boolean;
  ocr?: boolean;
  replica_target_id?: number | null;
}

export type StorageView = AdminStorage;

export interface SaveContext {
  actor?: ActorRef | null;
  request?: RequestMeta;
  /** CLI: required fields missing are only warnings, and the probe may be skipped. */
  lenient?: boolean;
  /** Skip the connection probe (saving a storage whose backend is offline right now). */
  skipProbe?: boolean;
}

/** Sync interval rule of the spec: under 5 s is clamped to 15 minutes. */
export const clampInterval = (s: number): number => (s < 5 ? DEFAULT_INTERVAL_S : Math.floor(s));

export interface SyncControl {
  restart(id: number): Promise<void> | void;
  stop(id: number): Promise<void> | void;
}

const nameTaken = (name: string) => new AppError('name_taken', { name }, { field: 'name' });

export class StoragesService {
  constructor(
    private repo: StoragesRepo,
    private registry: DriverRegistry,
    private pool: DriverPool,
    private syncer: SyncControl,
    private secretKey: Buffer,
    private bus: EventBus,
    private opts: {
      demo: boolean;
      warn?: (msg: string) => void;
      /**
       * Checks a link to replication target `targetId` before it is saved
       * (the target exists, it is not at or inside this storage's root);
       * throws AppError. Replication answers it; without replication a link is refused.
       */
      checkReplicaLink?: (targetId: number, storage: TenantScope & { driver: string; config: StorageConfig }) => Promise<void>;
      /** Told the id of the first storage tenant 1 ever gets (none existed before it): the installation's default storage. */
      firstStorage?: (id: number) => Promise<unknown>;
      /** Told a storage's OCR was turned on: its scans already catalogued wait for reading (fulltext/indexer.ts). */
      ocrTurnedOn?: (id: number) => Promise<unknown>;
      /** Told a storage was deleted (its rows went with it): the in-memory indexes of other tables read again. */
      deleted?: (id: number) => Promise<unknown>;
    },
  ) {}

  /** A driver that cannot write (a plugin's `write: false`) makes its storages read-only; asking otherwise is refused. */
  private readOnly(driver: string, asked: boolean | undefined): 0 | 1 {
    if (this.registry.get(driver)?.descriptor.capabilities.write !== false) return asked ? 1 : 0;
    if (asked === false) throw validation('read_only', `the ${driver} driver cannot write: its storages are read-only`);
    return 1;
  }

  /** The registered drivers' descriptors (admin form, `GET /api/admin/storage-drivers`). */
  descriptors(): DriverDescriptor[] {
    return this.registry.list();
  }

  view(r: StorageRow): StorageView {
    const mod = this.registry.get(r.driver);
    const stored = JSON.parse(r.config) as StorageConfig;
    const config = mod ? maskSecrets(mod.descriptor, stored) : stored;
    return {
      id: r.id,
      uid: r.uid,
      name: r.name,
      driver: r.driver,
      config,
      config_summary: summary(r.driver, config),
      mount_path: r.mount_path,
      sync_mode: r.sync_mode,
      sync_interval_s: r.sync_interval_s,
      enabled: !!r.enabled,
      read_only: !!r.read_only,
      readonly: !!r.read_only,
      rbac_enabled: !!r.rbac_enabled,
      ocr: !!r.ocr,
      replica_target_id: r.replica_target_id,
      status: r.status,
      status_reason: r.status_reason,
      last_sync: r.last_sync_at ?? '',
      created_at: r.created_at,
      updated_at: r.updated_at,
      volume: r.volume ? (JSON.parse(r.volume) as StorageVolume) : null,
    };
  }

  /** The tenant's storages. */
  list(s: TenantScope): StorageView[] {
    return this.repo.all(s).map((r) => this.view(r));
  }

  /** The tenant's storage `id`; `not_found` when missing or another tenant's. */
  get(s: TenantScope, id: number): StorageView {
    const r = this.repo.byId(s, id);
    if (!r) throw new AppError('not_found');
    return this.view(r);
  }

  /** Adds a storage to tenant `s` (its name unique there). */
  async create(s: TenantScope, input: StorageInput, ctx: SaveContext = {}): Promise<StorageView> {
    if (input.name === undefined) throw validation('name', 'is required');
    if (input.driver === undefined) throw validation('driver', 'is required');
    const name = this.checkStorageName(s, input.name);
    const { driver, config } = this.prepareConfig(input.driver, input.config ?? {}, {}, ctx);
    this.checkTenantRoot(s, driver, config);
    const syncMode = this.checkSyncMode(input.sync_mode ?? this.defaultSyncMode(input.driver), input.driver);
    if (input.replica_target_id != null) await this.checkLink(s, input.replica_target_id, driver, config);
    const uid = newUid();
    const built = await this.buildAndProbe(uid, driver, config, ctx);
    const made = await this.repo.insert(s, {
      uid,
      name,
      driver,
      config: JSON.stringify(config),
      mount_path: input.mount_path ?? '/',
      sync_mode: syncMode,
      sync_interval_s: clampInterval(input.sync_interval_s ?? DEFAULT_INTERVAL_S),
      enabled: input.enabled === false ? 0 : 1,
      read_only: this.readOnly(driver, input.read_only),
      // The API's default is the spec's (open); the doors a person uses (admin UI, CLI, seeding, set-up) ask for closed.
      rbac_enabled: input.rbac_enabled ? 1 : 0,
      ocr: input.ocr ? 1 : 0,
      replica_target_id: input.replica_target_id ?? null,
    });
    if (!made) {
      // Taken by another save while this one probed its backend.
      await built?.close().catch(() => {});
      throw nameTaken(name);
    }
    const { id, first } = made;
    // The first storage of the installation's first tenant (home folders, the set-up page): tenant 1's.
    if (first && s.tenant_id === DEFAULT_TENANT.tenant_id) await this.opts.firstStorage?.(id);
    if (built) await this.pool.manager.install(id, built);
    await this.bus.emit(s, 'audit', { action: 'storage.add', actor: ctx.actor, request: ctx.request, resource: `storage:${id}`, meta: { name, driver } });
    await this.syncer.restart(id);
    return this.get(s, id);
  }

  /**
   * Partial update (PUT and PATCH) of the tenant's storage. A rename changes the first path segment at
   * once; the uid never changes.
   */
  update(s: TenantScope, id: number, input: StorageInput, ctx: SaveContext = {}): Promise<StorageView> {
    return this.pool.serial(id, async () => {
      const r = this.repo.byId(s, id);
      if (!r) throw new AppError('not_found');
      const patch: Partial<StorageRow> = {};
      if (input.name !== undefined && input.name !== r.name) patch.name = this.checkStorageName(s, input.name, id);
      const driverName = input.driver ?? r.driver;
      let rebuilt = false;
      if (input.config !== undefined || input.driver !== undefined) {
        const old = driverName === r.driver ? (JSON.parse(r.config) as StorageConfig) : {};
        const { config } = this.prepareConfig(driverName, input.config ?? (driverName === r.driver ? old : {}), old, ctx);
        this.checkTenantRoot(r, driverName, config, id);
        patch.driver = driverName;
        patch.config = JSON.stringify(config);
        rebuilt = patch.config !== r.config || driverName !== r.driver;
        // Pointed elsewhere by an admin: the volume there is recorded afresh at the next check.
        if (rebuilt) patch.volume = null;
      }
      if (input.sync_mode !== undefined) patch.sync_mode = this.checkSyncMode(input.sync_mode, driverName);
      if (input.sync_interval_s !== undefined) patch.sync_interval_s = clampInterval(input.sync_interval_s);
      if (input.mount_path !== undefined) patch.mount_path = input.mount_path;
      if (input.enabled !== undefined) patch.enabled = input.enabled ? 1 : 0;
      if (input.read_only !== undefined || patch.driver !== undefined) patch.read_only = this.readOnly(driverName, input.read_only ?? !!r.read_only);
      if (input.rbac_enabled !== undefined) patch.rbac_enabled = input.rbac_enabled ? 1 : 0;
      if (input.ocr !== undefined) patch.ocr = input.ocr ? 1 : 0;
      if (input.replica_target_id !== undefined) {
        if (input.replica_target_id !== null)
          await this.checkLink(r, input.replica_target_id, patch.driver ?? r.driver, JSON.parse(patch.config ?? r.config) as StorageConfig);
        patch.replica_target_id = input.replica_target_id;
      }
      const built = rebuilt ? await this.buildAndProbe(r.uid, driverName, JSON.parse(patch.config!), ctx) : null;
      if (!(await this.repo.update(s, id, patch))) {
        await built?.close().catch(() => {});
        throw nameTaken(patch.name!);
      }
      if (built) await this.pool.manager.install(id, built);
      await this.bus.emit(s, 'audit', {
        action: 'admin.config_change',
        actor: ctx.actor,
        request: ctx.request,
        resource: `storage:${id}`,
        meta: {
          fields: Object.keys(patch)
            .filter((k) => k !== 'config')
            .concat(patch.config ? ['config'] : []),
        },
      });
      await this.syncer.restart(id);
      if (patch.ocr === 1 && !r.ocr)
        await this.opts.ocrTurnedOn?.(id).catch((e) => this.opts.warn?.(`queueing the scans of storage ${id} for OCR failed: ${e}`));
      return this.get(s, id);
    });
  }

  /** Removes the tenant's storage and its cache rows; files on the backend are not touched. */
  delete(s: TenantScope, id: number, ctx: SaveContext = {}): Promise<void> {
    return this.pool.serial(id, async () => {
      const r = this.repo.byId(s, id);
      if (!r) throw new AppError('not_found');
      await this.syncer.stop(id);
      await this.pool.manager.remove(id);
      await this.repo.delete(s, id);
      await this.opts.deleted?.(id);
      await this.bus.emit(s, 'audit', {
        action: 'storage.delete',
        actor: ctx.actor,
        request: ctx.request,
        resource: `storage:${id}`,
        meta: { name: r.name, driver: r.driver },
      });
    });
  }

  /**
   * Probes a connection without saving: `input` alone (unsaved), or a saved
   * storage with `input` applied over it (secrets given as `***` keep theirs).
   */
  async test(s: TenantScope, input: StorageInput, savedId?: number): Promise<({ ok: true } & ProbeResult) | { ok: false; error: string }> {
    const saved = savedId !== undefined ? this.repo.byId(s, savedId) : undefined;
    if (savedId !== undefined && !saved) throw new AppError('not_found');
    const driverName = input.driver ?? saved?.driver;
    if (!driverName) throw validation('driver', 'is required');
    const old = saved && saved.driver === driverName ? (JSON.parse(saved.config) as StorageConfig) : {};
    const { config } = this.prepareConfig(driverName, input.config ?? old, old, {});
    try {
      const driver = await this.pool.manager.build({ uid: saved?.uid ?? 'test-' + newUid(), driver: driverName, config });
      try {
        return { ok: true, ...(await this.pool.manager.probe(driver)) };
      } finally {
        await driver.close().catch(() => {});
      }
    } catch (e) {
      if (e instanceof AppError && e.code === 'validation_failed') throw e;
      return { ok: false, error: e instanceof AppError ? String(e.params.reason ?? e.message) : (e as Error).message };
    }
  }

  /** A storage of tenant `s` may link only a target of that tenant (replication answers: another's is no such target). */
  private async checkLink(s: TenantScope, targetId: number, driver: string, config: StorageConfig): Promise<void> {
    if (!this.opts.checkReplicaLink) throw new AppError('not_configured', { feature: 'replication' });
    await this.opts.checkReplicaLink(targetId, { tenant_id: s.tenant_id, driver, config });
  }

  /*
   * Backends that are not storages (replication targets) follow the same
   * config rules: aliases, root guard, required fields, sealed secrets read
   * back as `***`, a probe before saving.
   */

  /** Resolves, validates and seals `raw` over `old` (secrets sent as `***` or left out keep theirs). Throws `validation_failed`. */
  prepareBackendConfig(driver: string, raw: unknown, old: StorageConfig = {}): StorageConfig {
    return this.prepareConfig(driver, raw, old, {}).config;
  }

  /** A stored config with every set secret shown as `***`. */
  maskedConfig(driver: string, stored: StorageConfig): StorageConfig {
    const mod = this.registry.get(driver);
    return mod ? maskSecrets(mod.descriptor, stored) : stored;
  }

  /** A stored config opened (secrets decrypted) and resolved, as the driver would get it. */
  openedConfig(driver: string, stored: StorageConfig): StorageConfig {
    const mod = this.registry.get(driver);
    if (!mod) return stored;
    return resolveConfig(mod, openSecrets(mod.descriptor, stored, this.secretKey)).config;
  }

  /** Whether a driver of that name is registered. */
  hasDriver(driver: string): boolean {
    return !!this.registry.get(driver);
  }

  /** Builds an undecorated driver for a stored config and, unless `probe` is false, probes it (10 s). */
  async buildBackend(uid: string, driver: string, stored: StorageConfig, probe = true): Promise<StorageDriver> {
    const built = await this.pool.manager.build({ uid, driver, config: stored }, { bare: true });
    return probe ? this.probed(built) : built;
  }

  /** `built` once its probe passed; closed when it failed. */
  private async probed(built: StorageDriver): Promise<StorageDriver> {
    try {
      await this.pool.manager.probe(built);
    } catch (e) {
      await built.close().catch(() => {});
      throw e;
    }
    return built;
  }

  /** The root guard across tenants (tenant-roots.ts): `validation_failed` on `config.path`. */
  private checkTenantRoot(s: TenantScope, driver: string, config: StorageConfig, exceptId?: number): void {
    const issue = crossTenantRootIssue(s, driver, config, this.repo.everyTenant(), exceptId);
    if (issue) throw new AppError('validation_failed', { field: 'config.path', reason: issue }, { field: 'config.path', reason: issue });
  }

  private checkStorageName(s: TenantScope, name: unknown, exceptId?: number): string {
    if (typeof name !== 'string') throw validation('name');
    const n = name.trim();
    try {
      checkName(n);
    } catch (e) {
      throw new AppError('validation_failed', { field: 'name', reason: (e as AppError).code }, { field: 'name', reason: (e as AppError).code });
    }
    if (this.repo.nameTaken(s, n, exceptId)) throw nameTaken(n);
    return n;
  }

  /**
   * A storage created without a sync mode watches for changes when its driver
   * can (the local driver), so files written on disk show up at once; the
   * syncer falls back to polling when watching fails. Other drivers poll.
   */
  private defaultSyncMode(driver: string): SyncMode {
    return this.registry.get(driver)?.descriptor.capabilities.watch ? 'fsnotify' : 'poll';
  }

  private checkSyncMode(mode: string, driver: string): SyncMode {
    if (!(SYNC_MODES as readonly string[]).includes(mode)) throw validation('sync_mode', `must be one of ${SYNC_MODES.join(', ')}`);
    if (mode === 'fsnotify' && !this.registry.get(driver)?.descriptor.capabilities.watch)
      throw validation('sync_mode', `the ${driver} driver cannot watch for changes; use poll or ondemand`);
    return mode as SyncMode;
  }

  /** Resolves, validates and seals a config; merges masked secrets with the stored ones. */
  private prepareConfig(driver: string, raw: unknown, old: StorageConfig, ctx: SaveContext): { driver: string; config: StorageConfig } {
    const mod = this.registry.get(driver);
    if (!mod) throw validation('driver', `unknown driver ${driver}`);
    if (this.opts.demo) throw new AppError('forbidden', { reason: 'demo' }, { reason: 'storage drivers are disabled on a demo instance' });
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw validation('config', 'must be a JSON object');
    const merged = mergeForUpdate(mod.descriptor, old, raw as StorageConfig);
    const { config, problems } = resolveConfig(mod, merged);
    for (const p of problems) {
      if (ctx.lenient && p.kind === 'required') {
        this.opts.warn?.(`warning: config.${p.field} ${p.message}`);
        continue;
      }
      throw new AppError('validation_failed', { field: `config.${p.field}`, reason: p.message }, { field: `config.${p.field}`, reason: p.message });
    }
    for (const v of Object.values(config)) if (v === MASK) throw validation('config', 'a secret field reads "***" but nothing is stored for it');
    return { driver, config: sealSecrets(mod.descriptor, config, this.secretKey) };
  }

  private async buildAndProbe(uid: string, driver: string, config: StorageConfig, ctx: SaveContext) {
    if (ctx.lenient && ctx.skipProbe) return null;
    const built = await this.pool.manager.build({ uid, driver, config });
    return ctx.skipProbe ? built : this.probed(built);
  }
}

/** A short human description of where a storage points, without secrets. */
export function summary(driver: string, c: StorageConfig): string {
  const s = (k: string) => (typeof c[k] === 'string' || typeof c[k] === 'number' ? String(c[k]) : '');
  switch (driver) {
    case 'local':
      return s('path');
    case 's3':
      return `s3://${s('bucket')}/${s('prefix')}${s('endpoint') ? ` @ ${s('endpoint')}` : ''}`;
    case 'sftp':
      return `sftp://${s('user')}@${s('host')}${s('port') ? ':' + s('port') : ''}${s('root')}`;
    case 'ftp':
      return `ftp${c.secure ? 's' : ''}://${s('user') || 'anonymous'}@${s('host')}${s('port') ? ':' + s('port') : ''}${s('root')}`;
    case 'webdav':
      return `${s('url')}${s('root')}`;
    case 'smb':
      return `//${s('host')}/${s('share')}${s('root') ? '/' + s('root').replace(/^\/+/, '') : ''}`;
    default:
      return Object.entries(c)
        .filter(([, v]) => typeof v === 'string' && v !== MASK)
        .map(([k, v]) => `${k}=${v}`)
        .slice(0, 3)
        .join(' ');
  }
}
