/**
 * The app store (issue 33, first slice; docs/app-store.md): the signed static
 * store format, store connections and their catalogue, and installs,
 * upgrades and uninstalls of apps from a store through the app plugins'
 * install path.
 */
import { statfs } from 'node:fs/promises';
import { DEFAULT_TENANT, type ChangeChannel, type Db } from '../db';
import { AppError } from '../errors';
import type { EventBus } from '../events';
import type { AppPlugins } from '../plugins';
import type { SettingsStore } from '../settings';
import { StoreConnectionsRepo } from './connections.repo';
import { LanguagePacksRepo } from './language-packs.repo';
import { LanguagePackStore } from './language-packs';
import { StoreDrivers, type PluginDrivers } from './driver-install';
import { AppStore, type StoreApps } from './service';
import { StoreUpdates } from './updates';
import { StoreUpdatesRepo } from './updates.repo';
import { StoreLicences } from './licences';

export { AppStore, CATALOGUE_TTL_MS, type InstallRequest } from './service';
export { StoreUpdates, type UpdateReport } from './updates';
export { StoreLicences, STALE_MS } from './licences';
export { StoreInstallOps, INSTALL_JOB } from './install-ops';
export { issueLicence, revokeLicences, signLicence } from './licence-files';
export { buildStore } from './build';
export { verifyStore } from './verify';
export { CATEGORIES, fingerprint, type StoreCategory } from './format';
export { PACK_FORMAT, packFile } from './language-pack';
export { DRIVER_FORMAT, DRIVER_MANIFEST, DRIVER_PROGRAM } from './driver-package';

/** The store and its language packs; `await store.loadLanguages()` before serving puts the installed packs in memory. */
export function createAppStore(d: {
  db: Db;
  bus: EventBus;
  plugins: AppPlugins;
  settings: SettingsStore;
  version: string;
  timeoutMs: number;
  /** Storage drivers: the loader and registry (from compose.ts), the plugin folder they live in, which storages use a driver. */
  drivers: { plugins: PluginDrivers; dir: string; usedBy: (driver: string) => string[] };
  /** Where apps and language packs are kept on this machine: the SQLite file's folder; null on PostgreSQL (another machine's disk). */
  dbDir: string | null;
  /** Tells the other instances of a language pack installed or removed (several instances on one database). */
  channel?: ChangeChannel;
  log?: (msg: string, err?: unknown) => void;
}): AppStore {
  const p = d.plugins;
  const packs = new LanguagePackStore({ repo: new LanguagePacksRepo(d.db), bus: d.bus, log: d.log });
  if (d.channel) packs.attachChannel(d.channel);
  return new AppStore({
    repo: new StoreConnectionsRepo(d.db),
    packs,
    drivers: new StoreDrivers({ ...d.drivers, bus: d.bus, trusted: () => p.repo.trustedKeys() }),
    bus: d.bus,
    version: d.version,
    timeoutMs: d.timeoutMs,
    // The store installs apps: with app plugins off for the whole server it is off too.
    off: () => (p.off() === 'plugins_disabled' ? 'plugins_disabled' : !d.settings.get('app_store_enabled') ? 'app_store_disabled' : null),
    apps: storeApps(p),
    freeBytes: (kind) => freeBytes(kind === 'storage' ? d.drivers.dir : d.dbDir),
  });
}

/** Free bytes for an unprivileged writer on the disk holding `dir` (null: not on this machine, or unreadable). */
async function freeBytes(dir: string | null): Promise<number | null> {
  if (!dir) return null;
  try {
    const s = await statfs(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

/** The update check over the store (docs/app-store.md, "Updates"): `check()` daily and after a refresh. */
export function createStoreUpdates(d: { db: Db; bus: EventBus; plugins: AppPlugins; store: AppStore }): StoreUpdates {
  const updates = new StoreUpdates({ store: d.store, apps: storeApps(d.plugins), repo: new StoreUpdatesRepo(d.db), bus: d.bus });
  // Every uninstall (the store's or Admin → Apps → Installed) goes through the app plugins, which audit it.
  d.bus.on('audit', async (p, meta) => {
    // The store's updates are the operator's tenant's apps' (storeApps): another tenant's uninstall of the same id is not theirs.
    if (meta.tenant.tenant_id !== DEFAULT_TENANT.tenant_id) return;
    if (p.action === 'app_plugin.uninstall' && p.resource?.startsWith('app:')) await updates.forget(p.resource.slice('app:'.length));
    // A language pack's uninstall is the store's own.
    if (p.action === 'app_store.uninstall' && p.resource?.startsWith('language:')) await updates.forget(p.resource.slice('language:'.length));
  });
  return updates;
}

/** Licences online over the store's connections (docs/app-store.md, "Licences online"): `refreshAll()` daily. */
export function createStoreLicences(d: { db: Db; bus: EventBus; plugins: AppPlugins; store: AppStore; timeoutMs: number }): StoreLicences {
  return new StoreLicences({
    repo: new StoreConnectionsRepo(d.db),
    apps: storeApps(d.plugins),
    bus: d.bus,
    timeoutMs: d.timeoutMs,
    requireOn: () => d.store.requireOn(),
  });
}

/**
 * The app plugins' admin side as the store sees it. The store is the platform operator's (docs/tenants.md,
 * "Step 1: apps"): it installs, upgrades and licenses the apps of the operator's tenant, tenant 1 (its routes
 * are platform routes; its system work, updates and licence checks, has no other tenant).
 */
const storeApps = (p: AppPlugins): StoreApps => ({
  installed: async () => new Map((await p.repo.list(DEFAULT_TENANT)).map((a) => [a.id, { version: a.version, permissions: [...a.manifest.permissions] }])),
  install: (by, bytes, hosts, expect) => p.admin.install(by, bytes, hosts, expect),
  upgrade: (by, id, bytes, expect) => p.admin.upgrade(by, id, bytes, expect),
  uninstall: (by, id) => p.admin.uninstall(by, id),
  setLicense: async (by, id, token) => {
    const app = await p.repo.get(DEFAULT_TENANT, id);
    if (!app) throw new AppError('not_found', { path: id });
    return p.licenses.set(by, app, token);
  },
  syncRevocations: (by, source, ids) => p.licenses.syncStoreRevocations(by, source, ids),
});
