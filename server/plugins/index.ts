/**
 * App plugins (SPEC App plugins; docs/app-plugins.md): the registry of
 * installed apps, their sandboxes, the admin side (install, upgrade, ...),
 * the user side (actions, views, events) and plugin jobs. Apps act for a
 * person through `files.forActor` and its write gate only.
 */
import type { ActorRestorer } from '../auth';
import type { Db } from '../db';
import type { EventBus } from '../events';
import type { FileService, Place } from '../files';
import type { JobQueue } from '../jobs';
import type { SettingsStore } from '../settings';
import type { SharesService } from '../shares';
import { AppAdmin } from './admin';
import { AppActions } from './actions/service';
import type { HostDeps, LocksPort } from './host/host-api';
import { pagesHostApi } from './host/pages';
import { PluginJobs } from './jobs';
import { AppPages } from './public/pages';
import { AppsRepo } from './registry/apps.repo';
import { AppRuntime } from './runtime';

export { PLUGIN_JOB } from './jobs';
export { RUN_LIMITS } from './actions/service';
export { PACKAGE_LIMITS } from './package/package';

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
  stateOf: (place: Place) => string[];
  findUsers: (q: string, limit: number) => Array<{ id: number; username: string; email: string }>;
  /** Locks and `app_state` for apps: wired when the locks module lands (host-api.ts, `LocksPort`). */
  locks?: LocksPort;
  /** Public app pages are share rows (host `pages.*`, the /api/public/s routes); without it `pages.*` is not offered. */
  shares?: SharesService;
  log: (msg: string) => void;
}

export type AppPlugins = ReturnType<typeof createAppPlugins>;

export function createAppPlugins(d: AppPluginsDeps) {
  const repo = new AppsRepo(d.db);
  const runtime = new AppRuntime({ memoryBytes: d.memoryBytes, log: d.log });
  const host = (): HostDeps => ({
    files: d.files, repo, locks: d.locks,
    pages: pages ? (app, actor) => pagesHostApi(pages!, app, actor) : undefined,
    enqueue: (app, actor, action, paths, params, lang) => {
      const me = d.files.forActor(actor);
      return jobs.enqueue(app, actor, action, paths.map((p) => me.target(p).place), params, lang);
    },
  });
  const jobs = new PluginJobs({ repo, runtime, files: d.files, queue: d.queue, actors: d.actors, host });
  /** Why apps are off for users right now, or null. */
  const off = () => (!d.enabled ? 'plugins_disabled' : !d.settings.get('app_plugins_enabled') ? 'app_plugins_disabled' : null);
  const actions = new AppActions({ repo, runtime, files: d.files, jobs, host, stateOf: d.stateOf, off, findUsers: d.findUsers });
  const admin = new AppAdmin({ repo, runtime, bus: d.bus, version: d.version });
  // Assigned before any call can reach `host()` (calls start from routes and jobs, after this returns).
  const pages: AppPages | null = d.shares ? new AppPages({ repo, runtime, files: d.files, jobs, host, shares: d.shares, off }) : null;
  return {
    repo, runtime, jobs, actions, admin, off, pages,
    /** The capability the web UI reads (`app_plugins.enabled`). */
    capability: () => ({ enabled: off() === null }),
    start: () => d.enabled && runtime.warm(),
    close: () => runtime.close(),
  };
}
