/**
 * Composition root: config → data dir (lock, secret key) → database → bus,
 * audit, queue, auth → feature modules → HTTP. `startServer` is what the CLI
 * and the desktop host call; it returns once the listener is bound.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './config';
import { openDatabase, type Db } from './db';
import { EventBus, RealtimeHub, folderKey } from './events';
import { attachAudit } from './audit';
import { JobQueue, Scheduler } from './jobs';
import { createAuth, type Auth } from './auth';
import { DriverManager, DriverRegistry, builtinDrivers, discoverPlugins } from './storage';
import { createCatalogue, type Catalogue } from './catalogue';
import { seedDefaultStorage } from './catalogue/seed';
import { createThumbs, attachThumbs, thumbCapabilities, thumbUrl } from './thumbs';
import { createArchives } from './archives';
import { createFiles, NEWDOC_TYPES } from './files';
import { createUploads } from './uploads';
import { createShares, seedShareMaxTtlDays, getShareMaxTtlDays } from './shares';
import { createMailer } from './events';
import { Bell, attachBell, Webhooks } from './events';
import { SettingsStore } from './settings';
import { createProtection, attachProtection, attachInfectionMail, type Protection } from './protection';
import { createUpdater, updaterOptionsFromConfig } from './update';
import { acquireLock, ensureDirs, layout, loadSecretKey, type DataDirLayout } from './lib/data-dir';
import { createLogger, type Logger } from './lib/log';
import { toHost } from './lib/host-port';
import { buildApp } from './http/app';
import { authRoutes } from './http/routes/auth.routes';
import { adminUserRoutes } from './http/routes/admin-users.routes';
import { capabilitiesRoutes } from './http/routes/capabilities.routes';
import { opsRoutes } from './http/routes/ops.routes';
import { realtimeRoutes } from './http/routes/realtime.routes';
import { adminStorageRoutes } from './http/routes/admin-storages.routes';
import { quotaRoutes } from './http/routes/quota.routes';
import { thumbRoutes } from './http/routes/thumbs.routes';
import { archiveRoutes } from './http/routes/archives.routes';
import { filesRoutes } from './http/routes/files.routes';
import { filesVerbRoutes } from './http/routes/files-verbs.routes';
import { uploadRoutes } from './http/routes/uploads.routes';
import { shareRoutes } from './http/routes/shares.routes';
import { sharePublicRoutes } from './http/routes/shares-public.routes';
import { shareDropRoutes } from './http/routes/shares-drop.routes';
import { updateRoutes } from './http/routes/update.routes';
import { protectionRoutes } from './http/routes/protection.routes';
import { webhookRoutes } from './http/routes/protection-webhooks.routes';
import { trashRoutes } from './http/routes/trash.routes';
import { versionsRoutes } from './http/routes/versions.routes';
import { notificationRoutes } from './http/routes/notifications.routes';
import { parentRel, uiPath } from './lib/paths';
import type { Capabilities } from './http/contract';
import type { AppState } from './http/context';
import { publicOnly } from './http/middlewares/public-only';
import { trackActivity } from './http/middlewares/activity';
import { Listeners } from './http/listener';
import { createHealth } from './http/health';
import type { Router } from '@koa/router';

export interface RunningServer {
  url: string;
  port: number;
  publicPort: number | null;
  /** Graceful stop: stop accepting, finish in-flight requests up to the bound, stop workers, close the database. */
  close(): Promise<void>;
  /** Pauses or resumes background work. */
  pause(paused: boolean): void;
  // Exposed for tests and the CLI.
  db: Db;
  auth: Auth;
  queue: JobQueue;
  bus: EventBus;
  catalogue: Catalogue;
  protection: Protection;
  registry: DriverRegistry;
  dirs: DataDirLayout;
}

export interface StartOptions {
  logger?: Logger;
  /** Where the built web UI lives (default: dist/renderer beside the bundle). */
  rendererDir?: string;
}

const here = fileURLToPath(new URL('.', import.meta.url));
/** The bundle runs from dist/server (UI in dist/renderer); sources run from server/. */
const defaultRendererDir = () => join(here, /dist[\\/]server[\\/]?$/.test(here) ? '../renderer' : '../dist/renderer');

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const t0 = Date.now();
  const log = opts.logger ?? createLogger(config.logLevel);
  const logFn = (msg: string, err?: unknown) => (err ? log.error(msg, err) : log.info(msg));
  const dirs = layout(config.dataDirResolved);
  ensureDirs(dirs);
  const releaseLock = acquireLock(dirs);
  const cleanups: Array<() => Promise<void> | void> = [releaseLock];
  try {
    const secretKey = loadSecretKey(dirs);
    const db = openDatabase(dirs.db, undefined, { writeWaitMs: config.dbWriteWait });
    cleanups.unshift(() => db.close());
    const bus = new EventBus(db.sqlite, logFn);
    attachAudit(db, bus);
    const hub = new RealtimeHub();
    const queue = new JobQueue(db.sqlite, { concurrency: 4, log: logFn });
    const scheduler = new Scheduler(db.sqlite, logFn);
    const auth = createAuth(db, bus, {
      secretKey,
      sessionTtlMs: config.sessionTtl,
      maxAttempts: config.loginMaxAttempts,
      lockMs: config.loginLock,
      desktopBootstrap: config.desktopBootstrap,
    });
    await seedFirstRun(config, auth, log);

    const registry = new DriverRegistry();
    for (const d of builtinDrivers) registry.register(d);
    // Storage plugins: every program in <data dir>/plugins is handshaken and probed before it registers.
    const plugins = await discoverPlugins(dirs.plugins, { serviceVersion: config.version });
    for (const m of plugins.modules) registry.register(m);
    for (const f of plugins.failures) log.warn(`storage plugin ${f.program} refused: ${f.error.params.reason ?? f.error.message}`);
    const manager = new DriverManager(registry, { secretKey, stateDir: dirs.state, onCloseError: (id, e) => log.warn(`closing the driver of storage ${id} failed`, e) });
    cleanups.unshift(() => manager.closeAll());
    const catalogue = createCatalogue({ db, bus, queue, registry, manager, secretKey, log, demo: config.demo, syncHooks: { onFileChanged: (id) => protection.antivirus.onSyncFile(id) } });
    const settings = new SettingsStore(db);
    const protection = createProtection({ db, catalogue, queue, bus, settings, secretKey, log: logFn });
    attachProtection(protection, catalogue, scheduler, logFn);
    await seedDefaultStorage(config, db, catalogue.repo, catalogue.storages, log);
    const thumbs = createThumbs({ db, catalogue, cacheDir: dirs.thumbs, secretKey, urlTtlMs: config.thumbsUrlTtl, log });
    attachThumbs(thumbs, queue, catalogue);
    const archives = createArchives({ db, catalogue, queue, maxArchiveBytes: config.maxArchiveBytes });
    const files = createFiles({ db, bus, catalogue, queue, thumbUrl: (id) => thumbUrl(id) });
    // A thumbnail that became ready changes what its folder's listing shows (and open browsers refresh).
    thumbs.onReady((n) => void bus.emit('folder.changed', { storage_id: n.storage_id, folder: parentRel(n.path), kind: 'updated', path: n.path, name: n.name }));
    const uploads = createUploads({ db, catalogue, auth, stagingDir: dirs.staging, limits: { maxUploadBytes: config.maxUploadBytes, maxChunkBytes: config.maxChunkBytes, sessionTtlMs: config.uploadSessionTtl } });
    files.verbs.useGuards(protection);
    uploads.useBeforeOverwrite((storageId, rel, actor) => protection.versions.snapshotBeforeOverwrite(storageId, rel, actor));
    seedShareMaxTtlDays(db, config.shareMaxTtl);
    const mailer = createMailer({ host: config.smtpHost, port: config.smtpPort, user: config.smtpUser, password: config.smtpPassword, from: config.smtpFrom, secure: config.smtpSecure }, logFn);
    const shares = createShares({ db, auth, catalogue, bus, uploads, mailer, secretKey, publicUrl: config.publicUrl, zipDir: dirs.zips, zipWarmMaxBytes: config.shareZipWarmMaxBytes, zipMaxAgeMs: config.shareZipMaxAge, log: logFn });
    cleanups.unshift(() => {
      shares.zips.stopAll();
      mailer.close();
    });
    const bell = new Bell(db.sqlite, (uid, n) => hub.toUser(uid, { event: 'notification', data: n }));
    const admins = () => auth.repo.list({ role: 'admin', limit: 1000 }).filter((u) => !u.disabled);
    attachBell(bus, bell, { admins: () => admins().map((u) => u.id), dropOwner: (id) => [id] });
    const webhooks = new Webhooks(db.sqlite, queue, { targets: () => protection.webhooks.forDelivery(), log: logFn });
    webhooks.attach(bus);
    attachInfectionMail(bus, mailer, () => admins().map((u) => u.email), logFn);
    bus.on('folder.changed', (e) => {
      const name = catalogue.repo.byId(e.storage_id)?.name;
      if (!name) return;
      hub.toFolder(folderKey(e.storage_id, e.folder), { event: 'change', data: { folder: uiPath(name, e.folder), kind: e.kind, path: uiPath(name, e.path), name: e.name } });
    });
    // Native notifications in the desktop shell (docs/server-host-protocol.md).
    bus.on('file.infected', (e) => toHost({ type: 'notify', event: 'file.infected', title: e.title, body: e.body }));
    bus.on('drop.received', (e) => toHost({ type: 'notify', event: 'drop.received', title: 'Files received', body: `${e.files.length} file(s) in ${e.folder}` }));
    bus.on('update_available', (e) => toHost({ type: 'notify', event: 'update_available', title: `Filedock ${e.version} is available`, body: e.notes ?? '' }));
    await bus.flush(); // events a crash left unpublished

    const activity = trackActivity(() => queue.runningCount);
    queue.onOpChange((op) => {
      if (op.visible && op.owner_id !== null) hub.toUser(op.owner_id, { event: 'op', data: { op: queue.get(op.id) } });
      activity.changed();
    });
    const updater = createUpdater({
      ...updaterOptionsFromConfig(config),
      snapshotDb: async (dest) => void (await db.sqlite.backup(dest)),
      emit: (event, payload) => void bus.emit(event, payload as never),
      log: { info: (m) => log.info(m), warn: (m) => log.warn(m) },
    });

    const capabilities = (): Capabilities => ({
      version: config.version,
      thumbs: thumbCapabilities(),
      external: { docserver_url: '', diagram_url: '', text_diagram: false },
      auth: { drivers: ['local'], allow_signup: false },
      limits: { max_upload_bytes: config.maxUploadBytes, max_archive_bytes: config.maxArchiveBytes, max_chunk_bytes: config.maxChunkBytes },
      storage_drivers: registry.list().map((d) => d.driver),
      antivirus: protection.antivirus.active,
      antivirus_mode: protection.antivirus.mode,
      share_max_ttl_days: getShareMaxTtlDays(db),
      newdoc_types: [...NEWDOC_TYPES],
      app_plugins: { enabled: false },
      assistant: { state: 'off', permitted: false, button: false },
    });

    const secureCookies = config.publicUrl.startsWith('https:');
    const routers: Array<Router<AppState>> = [
      capabilitiesRoutes(capabilities),
      authRoutes({ auth, secureCookies, maxJsonBytes: config.maxJsonBytes }),
      adminUserRoutes({ auth, db, maxJsonBytes: config.maxJsonBytes }),
      opsRoutes({ queue }),
      realtimeRoutes({
        hub,
        resolveFolder: (p, path) => {
          if (path === '/' || path === '') return null;
          const r = catalogue.resolve(p, path);
          return folderKey(r.storage.id, r.rel);
        },
      }),
      adminStorageRoutes({ catalogue, registry, maxJsonBytes: config.maxJsonBytes }),
      quotaRoutes({ catalogue, db }),
      thumbRoutes({ thumbs, catalogue }),
      archiveRoutes({ archives, catalogue, maxJsonBytes: config.maxJsonBytes }),
      updateRoutes({ updater, bus, maxJsonBytes: config.maxJsonBytes }),
      filesRoutes({ files }),
      filesVerbRoutes({ files, maxJsonBytes: config.maxJsonBytes }),
      uploadRoutes({ uploads, maxJsonBytes: config.maxJsonBytes }),
      protectionRoutes({ protection, maxJsonBytes: config.maxJsonBytes }),
      webhookRoutes({ protection, webhooks, maxJsonBytes: config.maxJsonBytes }),
      trashRoutes({ protection, catalogue, maxJsonBytes: config.maxJsonBytes }),
      versionsRoutes({ protection, catalogue, maxJsonBytes: config.maxJsonBytes }),
      notificationRoutes({ bell, maxJsonBytes: config.maxJsonBytes }),
      shareRoutes({ shares, maxJsonBytes: config.maxJsonBytes }),
      sharePublicRoutes({ shares, maxJsonBytes: config.maxJsonBytes, log: logFn }),
      shareDropRoutes({ shares, maxJsonBytes: config.maxJsonBytes }),
    ];
    const health = createHealth({ db, admission: { maxActive: config.admissionMaxActive, maxQueued: config.admissionMaxQueue, maxWaitMs: config.admissionMaxWait } });
    cleanups.unshift(health.stop);
    routers.push(health.routes);
    const appOptions = { auth, lang: config.locale, routers, rendererDir: opts.rendererDir ?? defaultRendererDir(), log: logFn, onDbBusy: () => db.waits.sawBusy(), afterAuth: [health.heavy] };
    const app = buildApp({ ...appOptions, before: [activity.middleware] });
    const publicApp = config.publicListen ? buildApp({ ...appOptions, before: [publicOnly, activity.middleware] }) : null;

    scheduler.every('sessions.sweep', 3_600_000, () => void auth.sessions.sweepExpired());
    scheduler.every('ops.prune', 86_400_000, () => void queue.prune(30 * 86_400_000));
    scheduler.every('outbox.prune', 86_400_000, () => void bus.prune(7 * 86_400_000));
    scheduler.every('thumbs.sweep', config.thumbsSweepInterval, () => void thumbs.sweep());
    scheduler.every('uploads.sweep', 3_600_000, () => void uploads.sweep());
    scheduler.every('webhooks.prune', 86_400_000, () => void webhooks.prune(30 * 86_400_000));
    scheduler.every('shares.sweep', 3_600_000, () => void shares.sweep());
    scheduler.every('sharezip.warm', 5 * 60_000, () => void shares.zips.warm());
    queue.start();
    await catalogue.syncer.startAll();
    updater.start();

    const listeners = new Listeners({ headersTimeoutMs: config.httpHeadersTimeout, idleTimeoutMs: config.httpIdleTimeout, keepAliveTimeoutMs: config.httpKeepAliveTimeout });
    const port = await listeners.create(app.callback()).listen(config.port, config.host);
    let publicPort: number | null = null;
    if (publicApp) {
      const at = config.publicListen.lastIndexOf(':');
      publicPort = await listeners.create(publicApp.callback(), config.publicMaxConnsPerIp).listen(Number(config.publicListen.slice(at + 1)), config.publicListen.slice(0, at).replace(/^\[|\]$/g, ''));
      log.info(`public links listener on ${config.publicListen.slice(0, at)}:${publicPort} (share and drop routes only)`);
    }
    const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    const url = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
    log.info(`listening on ${url} (started in ${Date.now() - t0} ms, data in ${dirs.root})`);
    toHost({ type: 'ready', port, url });

    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        log.info('shutting down');
        await listeners.close(config.shutdownGrace);
        await scheduler.stop();
        updater.stop();
        await catalogue.syncer.stopAll();
        await queue.stop(2000);
        await bus.flush();
        for (const c of cleanups) await c();
        toHost({ type: 'stopped' });
      })());

    return {
      url,
      port,
      publicPort,
      close,
      pause: (p) => {
        queue.setPaused(p);
        catalogue.syncer.setPaused(p);
      },
      db,
      auth,
      queue,
      bus,
      catalogue,
      protection,
      registry,
      dirs,
    };
  } catch (e) {
    for (const c of cleanups) await c();
    throw e;
  }
}

/** First run: the admin from SERVICE_ADMIN_*, or the desktop owner; otherwise the setup page waits. */
async function seedFirstRun(config: Config, auth: Auth, log: Logger): Promise<void> {
  if (auth.repo.count() > 0) return;
  if (config.adminEmail && config.adminPassword) {
    await auth.users.create({ email: config.adminEmail, password: config.adminPassword, role: 'admin' });
    log.info(`created the first admin ${config.adminEmail}`);
  } else if (config.desktopBootstrap) {
    const { randomBytes } = await import('node:crypto');
    await auth.users.create({ email: config.adminEmail || 'owner@filedock.local', username: 'owner', password: randomBytes(24).toString('base64url'), role: 'admin' });
    log.info('created the desktop owner account');
  } else {
    log.warn('no users yet: open the web UI from this computer to create the first admin');
  }
}
