/**
 * App plugins (SPEC App plugins; docs/app-plugins.md): the registry of
 * installed apps, their sandboxes, the admin side (install, upgrade, ...),
 * the user side (actions, views, events) and plugin jobs. Apps act for a
 * person through `files.forActor` and its write gate only.
 */
import type { ActorRestorer, PermissionSubject } from '../auth';
import { TenantsRepo, type Db, type TenantScope } from '../db';
import type { EventBus } from '../events';
import type { FileService, Place } from '../files';
import type { JobQueue } from '../jobs';
import type { SettingsStore } from '../settings';
import type { SharesService } from '../shares';
import { AppAdmin } from './admin';
import { AppActions, mayUseApp } from './actions/service';
import { AppLicenses } from './licenses';
import type { HostDeps, PublicUser } from './host/host-api';
import { pagesHostApi } from './host/pages';
import { PluginJobs } from './jobs';
import { AppPages } from './public/pages';
import { AppsRepo, type AppRef } from './registry/apps.repo';
import { AppHostRepo } from './registry/host.repo';
import { AppRuntime } from './runtime';
import { AppWakeups, type WakeupOptions } from './wakeup';

export { PLUGIN_JOB } from './jobs';
export { RUN_LIMITS } from './actions/service';
export { PACKAGE_LIMITS, peekAppManifest } from './package/package';
export type { Manifest } from './package/manifest';

export interface AppPluginsDeps {
  db: Db;
  bus: EventBus;
  files: FileService;
  queue: JobQueue;
  actors: ActorRestorer;
  settings: SettingsStore;
  version: string;
  /** SERVICE_APP_PLUGINS: off means no app code runs and every app route answers `plugins_disabled`. */
  enabled: boolean;
  memoryBytes: number;
  stateOf: (place: Place) => Promise<string[]>;
  /** Enabled people of the tenant matching `q` (an app's people are its tenant's). */
  findUsers: (s: TenantScope, q: string, limit: number) => Promise<PublicUser[]>;
  /** One enabled account of the tenant by id, in the picker's shape (host `users.get`), or null. */
  findUser: (s: TenantScope, id: number) => Promise<PublicUser | null>;
  /** Public app pages are share rows (host `pages.*`, the /api/public/s routes); without it `pages.*` is not offered. */
  shares?: SharesService;
  /** Every enabled account's permission subject in the tenant (a licence's seat count: the app's tenant's people). */
  people: (s: TenantScope) => Promise<PermissionSubject[]>;
  log: (msg: string) => void;
  /** Wake-up timing (config SERVICE_APP_WAKEUP_INTERVAL / _FIRST); tests shorten it. */
  wakeup?: WakeupOptions;
}

export type AppPlugins = ReturnType<typeof createAppPlugins>;

export function createAppPlugins(d: AppPluginsDeps) {
  const repo = new AppsRepo(d.db);
  const hostRepo = new AppHostRepo(d.db);
  const tenants = new TenantsRepo(d.db);
  const runtime = new AppRuntime({ memoryBytes: d.memoryBytes, log: d.log });
  const host = (): HostDeps => ({
    files: d.files,
    repo,
    hostRepo,
    findUser: d.findUser,
    pages: pages ? (app, actor) => pagesHostApi(pages!, app, actor) : undefined,
    enqueue: (app, actor, action, paths, params, lang) => {
      const me = d.files.forActor(actor, 'refuse');
      return jobs.enqueue(
        app,
        actor,
        action,
        paths.map((p) => me.target(p).place),
        params,
        lang,
      );
    },
  });
  const licenses = new AppLicenses({ repo, hostRepo, bus: d.bus, allowedUsers: async (app) => (await d.people(app)).filter((p) => mayUseApp(p, app)).length });
  const jobs = new PluginJobs({ repo, runtime, files: d.files, queue: d.queue, actors: d.actors, host, licenses });
  /** Why apps are off for users right now, or null. */
  const off = () => (!d.enabled ? 'plugins_disabled' : !d.settings.get('app_plugins_enabled') ? 'app_plugins_disabled' : null);
  const actions = new AppActions({ repo, runtime, files: d.files, jobs, host, stateOf: d.stateOf, off, findUsers: d.findUsers, licenses });
  const releaseLocks = async (app: AppRef) => {
    let n = 0;
    for (const t of await hostRepo.tokensOf(app)) {
      try {
        if (await d.files.locks.clear(t.storage_id, t.rel, app.id)) n++;
      } catch (e) {
        d.log(`app ${app.id}: the lock on ${t.rel} could not be released: ${(e as Error).message}`);
      }
    }
    return n;
  };
  const admin = new AppAdmin({ repo, runtime, bus: d.bus, version: d.version, releaseLocks, licenseOf: (app) => licenses.status(app) });
  const wakeups = new AppWakeups(
    { repo, hostRepo, runtime, licenses, jobs, files: d.files, host, off, log: d.log, tenants: () => tenants.list() },
    d.wakeup ?? { intervalMs: 3_600_000, firstDelayMs: 30_000 },
  );
  // Assigned before any call can reach `host()` (calls start from routes and jobs, after this returns).
  const pages: AppPages | null = d.shares ? new AppPages({ repo, runtime, files: d.files, jobs, host, shares: d.shares, licenses, off }) : null;
  return {
    repo,
    runtime,
    jobs,
    actions,
    admin,
    licenses,
    wakeups,
    off,
    pages,
    /** The capability the web UI reads (`app_plugins.enabled`). */
    capability: () => ({ enabled: off() === null }),
    start: async () => {
      if (!d.enabled) return;
      // The spare sandbox thread (QuickJS compiled) is kept only once an app is installed: without apps it
      // would cost every install its memory for nothing. The first app's first call starts one itself.
      // The lists also fill the apps' cache that synchronous op presenters read (AppsRepo.known).
      let installed = 0;
      for (const t of await tenants.list()) installed += (await repo.list(t)).length;
      if (installed) runtime.warm();
      wakeups.start();
    },
    close: async () => {
      await wakeups.stop();
      await runtime.close();
    },
  };
}
