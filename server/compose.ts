/**
 * The composition root: builds every service of a Filedock process from the
 * config, in dependency order, with each extension point passed at
 * construction (no setters): the scan and thumbnail policies are the
 * catalogue's write-gate and sync hooks, protection's trash and versions are
 * the file service's ports, driver decorators wrap every driver the manager
 * builds. `service serve` (main.ts) adds HTTP and starts the background work;
 * every CLI command gets the same services (plugin drivers, gate, protection)
 * with nothing started.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from './config';
import {
  DEFAULT_TENANT,
  InstancesRepo,
  type TenantScope,
  cliAppName,
  localChannel,
  openDatabase,
  openPgChannel,
  openPostgresDatabase,
  serverAppName,
} from './db';
import { randomBytes } from 'node:crypto';
import { Bell, EventBus, RealtimeHub, Webhooks, attachBell, createMailer } from './events';
import { attachAudit } from './audit';
import { Governor, JobQueue, Scheduler } from './jobs';
import { processCpuSeconds } from './lib/proc-cpu';
import { createAuth, createOidc, setPasswordCost } from './auth';
import { composeTenants } from './compose-tenants';
import { DriverManager, DriverRegistry, builtinDrivers, discoverPlugins, loadPluginDriver, type VolumeProbe } from './storage';
import {
  createCatalogue,
  parseItems,
  storageSummary,
  storageTenant,
  RequestMeter,
  StoragesRepo,
  TextExtractsRepo,
  ThumbStates,
  type SyncFilesHook,
  type WriteHook,
} from './catalogue';
import { FileService, Homes } from './files';
import { StorageOps } from './files/internal';
import { createThumbs, removeThumbFiles, thumbCapabilities, thumbUrl, ThumbDispatcher } from './thumbs';
import { createArchives } from './archives';
import { TextIndexer } from './fulltext';
import { createUploads } from './uploads';
import { createShares } from './shares';
import { SettingsStore } from './settings';
import { ScanPolicy, attachInfectionMail, createProtection } from './protection';
import { createUpdater, updaterOptionsFromConfig } from './update';
import { acquireLock, checkSecretKey, ensureDirs, layout, loadSecretKey, secretKeyFingerprint } from './lib/data-dir';
import { createLogger, type Logger } from './lib/log';
import { readOnlyDecorator } from './storage/read-only';
import { assertEveryJobHandled } from './jobs-registry';
import type { Capabilities } from './contract';
import { createGatewayCore } from './gateways';
import { createReplication } from './replication';
import { createDocserver, createExternal } from './docserver';
import { createAssistant } from './assistant';
import { createProvider, type ProviderFactory } from './assistant/providers';
import { createAppPlugins } from './plugins';
import { createAppStore, createStoreLicences, createStoreUpdates, StoreInstallOps } from './store';
import { BackupService } from './backup';
import { createVault } from './vault';

/** A temp file another instance is writing is touched as bytes arrive; one untouched this long is abandoned. */
const SHARED_TEMP_GRACE_MS = 10 * 60_000;

export interface ComposeOptions {
  logger?: Logger;
  /** `server` holds the data-dir lock (one server per folder); CLI commands run beside a server. */
  role: 'server' | 'cli';
  /** The assistant's provider adapters (tests pass a scripted one). */
  assistantProvider?: ProviderFactory;
  /** How local storages' volumes are identified (default: this OS's probe). */
  volumeProbe?: VolumeProbe | null;
}

/** Builds every service; on failure, whatever was opened is closed again before the error propagates. */
export async function compose(config: Config, opts: ComposeOptions) {
  const log = opts.logger ?? createLogger(config.logLevel);
  const logFn = (msg: string, err?: unknown) => (err ? log.error(msg, err) : log.info(msg));
  const dirs = layout(config.dataDirResolved);
  ensureDirs(dirs);
  // The shared staging folder (several instances): made here so the first upload does not race to create it.
  if (config.stagingDir) mkdirSync(config.stagingDir, { recursive: true, mode: 0o700 });
  const cleanups: Array<() => Promise<void> | void> = [];
  if (opts.role === 'server') cleanups.push(acquireLock(dirs));
  const close = async () => {
    for (const c of cleanups.splice(0)) await c();
  };
  try {
    setPasswordCost(config.passwordCost);
    const secretKey = loadSecretKey(dirs, config.secretKeyFile);
    // A server waits for a lock held elsewhere only off the event loop; a CLI command may simply block a while.
    // Random per process start: op leases and change notices name this instance by it (docs/operations.md).
    const instanceId = randomBytes(6).toString('hex');
    const applicationName = opts.role === 'server' ? serverAppName(instanceId) : cliAppName(instanceId);
    const dbOptions = {
      ...(opts.role === 'server' ? { writeWaitMs: config.dbWriteWait } : { busyTimeoutMs: 5000 }),
      poolSize: config.databasePool || undefined,
      applicationName,
    };
    const db = config.databaseUrl ? await openPostgresDatabase(config.databaseUrl, undefined, dbOptions) : openDatabase(dirs.db, undefined, dbOptions);
    cleanups.unshift(() => db.close());
    // One key for every instance on the database: the first records its fingerprint, a different key stops the start (exit 2).
    checkSecretKey(
      secretKey,
      await db.meta.setIfAbsent('secret_key_fingerprint', secretKeyFingerprint(secretKey)),
      config.secretKeyFile || 'secret.key in the data folder',
    );
    // Change notices between instances on one PostgreSQL (LISTEN/NOTIFY); nothing to tell on SQLite.
    // A CLI command opens it too, so the running instances hear what it changed (settings, storages).
    const channel = config.databaseUrl ? await openPgChannel(config.databaseUrl, instanceId, logFn, applicationName) : localChannel(instanceId);
    // No other server on this database: what a predecessor left (ops, finalizes, temp files) is a crash's, taken at once.
    const alone = opts.role === 'server' && !(await new InstancesRepo(db).othersRunning(instanceId));
    cleanups.unshift(() => channel.close());
    const bus = new EventBus(db, logFn);
    bus.attachChannel(channel);
    attachAudit(db, bus);
    const hub = new RealtimeHub();
    const settings = new SettingsStore(db);
    settings.attachChannel(channel);
    await settings.load();
    // One CPU budget for every kind of background work (docs/desktop.md, "Governor"); the admin setting wins.
    const governor = new Governor({
      budgetPercent: settings.get('background_cpu_percent') ?? config.backgroundCpu,
      powerOverride: config.powerState === 'auto' ? '' : config.powerState,
      cpuSeconds: processCpuSeconds,
    });
    settings.onChange((key) => {
      if (key === 'background_cpu_percent') governor.setBudget(settings.get('background_cpu_percent') ?? config.backgroundCpu);
    });
    const queue = new JobQueue(db, { concurrency: 4, log: logFn, governor, instanceId, leaseMs: config.opLease });
    if (opts.role === 'server') log.info(`instance ${instanceId} on ${db.dialect === 'postgres' ? 'PostgreSQL (op leases, change notices)' : 'SQLite'}`);
    const scheduler = new Scheduler(db, logFn);
    await settings.seed('share_max_ttl_days', config.shareMaxTtl);
    await settings.seed('allow_signup', config.allowSignup);
    const auth = createAuth(db, bus, {
      secretKey,
      sessionTtlMs: config.sessionTtl,
      maxAttempts: config.loginMaxAttempts,
      lockMs: config.loginLock,
      desktopBootstrap: config.desktopBootstrap,
      allowSignup: () => settings.get('allow_signup'),
    });
    // Tenants (docs/tenants.md): the directory, brandings, purge, the operator's service and the quotas.
    const { tenants, brandings, tenantPurge, platformTenants, quotas } = await composeTenants({
      multiTenant: config.multiTenant,
      db,
      channel,
      bus,
      queue,
      auth,
      // Built below: asked at call time.
      storage: (t) => catalogue.usage.of(t),
      links: (t) => shares.service.repo.activeCount(t, new Date().toISOString()),
    });
    const oidc = createOidc({
      db,
      bus,
      auth,
      secretKey,
      publicUrl: config.publicUrl,
      warn: (m) => log.warn(m),
      store: { load: () => settings.get('oidc'), save: (v) => settings.set('oidc', v) },
      env: {
        issuer: config.oidcIssuer,
        client_id: config.oidcClientId,
        client_secret: config.oidcClientSecret,
        scopes: config.oidcScopes,
        groups_claim: config.oidcGroupsClaim,
        admin_group: config.oidcAdminGroup,
        redirect_url: config.oidcRedirectUrl,
        label: config.oidcLabel,
      },
    });
    await oidc.config.applyEnvironment();

    const registry = new DriverRegistry();
    for (const d of builtinDrivers) registry.register(d);
    // Storage plugins: every program in <data dir>/plugins is handshaken and probed before it registers.
    const plugins = await discoverPlugins(dirs.plugins, { serviceVersion: config.version });
    for (const m of plugins.modules) registry.register(m);
    for (const f of plugins.failures) log.warn(`storage plugin ${f.program} refused: ${f.error.params.reason ?? f.error.message}`);

    // Server work on file contents skips encrypted folders; the roots index is the catalogue's, read at call time.
    const encrypted = (storageId: number, rel: string) => !!catalogue.roots.rootOf(storageId, rel);
    const plainWrites =
      (hook: WriteHook): WriteHook =>
      (node, info) =>
        encrypted(node.storage_id, node.path) ? undefined : hook(node, info);
    const plainSynced =
      (hook: SyncFilesHook): SyncFilesHook =>
      (storageId, files) =>
        hook(
          storageId,
          files.filter((f) => !encrypted(storageId, f.path)),
        );
    // Policies first: they only enqueue work, and they are what the catalogue calls after writes and syncs.
    const thumbDispatch = new ThumbDispatcher(new ThumbStates(db), () => storagesRepo.tenants(), queue, governor);
    const storagesRepo = new StoragesRepo(db);
    storagesRepo.attachChannel(channel);
    await storagesRepo.load();
    // A scan op belongs to its storage's tenant (a child carries its storage's tenant).
    const scans = new ScanPolicy({ queue, settings, tenantOf: (id) => storagesRepo.ofAnyTenant(id) });
    // Requests to metered backends are counted at the driver boundary; the books flush every few seconds and at close.
    const meter = new RequestMeter(
      db,
      storagesRepo,
      () => settings.get('meter_prices'),
      (m, e) => log.warn(m, e),
    );
    meter.start();
    cleanups.unshift(() => meter.stop());
    // Extraction reads a metered storage only within its share of the daily budget (fulltext/budget.ts).
    const textIndex = new TextIndexer(
      new TextExtractsRepo(db),
      queue,
      governor,
      storagesRepo,
      dirs.staging,
      { ocrOn: (id) => !!storagesRepo.ofAnyTenant(id)?.ocr, ocrLangs: config.ocrLangs },
      meter,
    );
    if (config.textIndex)
      meter.onBudgetChange(() => void textIndex.budgetChanged().catch((e) => log.warn('queueing text extraction after a budget change failed', e)));
    // Replication is the decorator after read-only. Its engine reads the primary through the pool and the
    // catalogue's config rules, both built after the manager: it reaches them at call time, never at build.
    const replication = createReplication({
      db,
      bus,
      queue,
      settings,
      log: logFn,
      backends: () => catalogue.storages,
      unlinkStorages: (t, id) => storagesRepo.unlinkReplicaTarget(t, id),
      // A storage known by uid or id alone (the decorator, the queue's payloads): its row in any tenant, a map lookup.
      storageTenant: (st) => (typeof st === 'number' ? storagesRepo.ofAnyTenant(st) : storagesRepo.ofAnyTenantByUid(st)),
      summary: storageSummary,
      primary: (id) => io.drivers.driverFor(id),
      backoffMs: config.replicaRetryBackoff,
      timeoutMs: config.replicaTimeout,
      rpoWarnS: Math.round(config.replicaRpoWarn / 1000),
      scratchDir: dirs.staging,
    });
    cleanups.unshift(() => replication.close());
    // Every driver the manager builds is wrapped; the read-only flag is read at each call, so a save applies at once.
    const manager = new DriverManager(registry, {
      secretKey,
      stateDir: dirs.state,
      decorators: [readOnlyDecorator((uid) => !!storagesRepo.ofAnyTenantByUid(uid)?.read_only), replication.decorator],
      // Leftovers older than this start are a killed predecessor's. With another server running (PostgreSQL) it
      // may be writing into the same folder: only files untouched for SHARED_TEMP_GRACE_MS are taken as left.
      staleBefore: opts.role === 'server' ? Math.floor(performance.timeOrigin) - (alone ? 0 : SHARED_TEMP_GRACE_MS) : undefined,
      stagingRoot: config.stagingDir || undefined,
      requestSink: (uid, driver) => meter.sink(uid, driver),
      onCloseError: (id, e) => log.warn(`closing the driver of storage ${id} failed`, e),
    });
    cleanups.unshift(() => manager.closeAll());
    const {
      catalogue,
      io,
      stop: stopCatalogue,
    } = createCatalogue({
      db,
      repo: storagesRepo,
      bus,
      queue,
      registry,
      manager,
      secretKey,
      log,
      demo: config.demo,
      meter,
      checkReplicaLink: (targetId, storage) => replication.targets.checkLink(targetId, storage),
      ocrTurnedOn: (id) => textIndex.ocrTurnedOn(id),
      volumeProbe: opts.volumeProbe,
      hooks: {
        // Encrypted files get no server thumbnail or text (docs/vault.md); their scan records `skipped: encrypted`.
        written: {
          thumbnail: plainWrites(thumbDispatch.writeHook()),
          antivirus: scans.writeHook(),
          ...(config.textIndex ? { text: plainWrites(textIndex.writeHook()) } : {}),
        },
        // Purging a file removes its thumbnail at once (trashing keeps the node, so it keeps the thumbnail).
        removed: { thumbnail: (_storageId, ids) => removeThumbFiles(dirs.thumbs, ids) },
        // Changes made outside the service (found by a sync or the watcher) are replicated like the decorator's.
        synced: {
          antivirus: scans.syncHook(),
          replication: replication.synced.files,
          ...(config.textIndex ? { text: plainSynced(textIndex.syncHook()) } : {}),
          ...(config.thumbsOnSync ? { thumbnail: plainSynced(thumbDispatch.syncHook()) } : {}),
        },
        syncRemoved: { replication: replication.synced.removed },
      },
    });
    cleanups.unshift(stopCatalogue);
    // App locks are checked from memory on every write: read before the first request, followed across instances.
    catalogue.locks.attachChannel(channel);
    await catalogue.locks.start();
    catalogue.roots.attachChannel(channel);
    await catalogue.roots.start();

    const ops = new StorageOps(io);
    // The external services' settings exist before the file service: they decide which new-document types it offers.
    const { external, newdocs } = await createExternal({
      db,
      secretKey,
      env: { url: config.docserverUrl, jwt_secret: config.docserverJwt, callback_url: config.docserverCallbackUrl },
    });
    const protection = createProtection({ db, catalogue, ops, queue, scans, bus, settings, secretKey, log: logFn });
    const files = new FileService({
      db,
      bus,
      catalogue,
      ops,
      queue,
      actors: auth.actors,
      ports: {
        trash: protection.trash,
        versions: protection.versions,
        newdoc: newdocs,
        ...(quotas && { quota: { room: (t, bytes, n) => quotas.room(t, bytes, n), hold: (t, bytes) => catalogue.usage.hold(t, bytes) } }),
      },
      thumbUrl: (id) => thumbUrl(id),
    });
    // Every account-creating door (admin, CLI, sign-up, OIDC) ends in UsersService.create: the home is made there.
    const homes = new Homes({ files, settings, db, log: (_l, msg, e) => log.warn(e ? `${msg}: ${(e as Error).message ?? e}` : msg) });
    auth.users.onCreated((u) => homes.provision(u));
    const { service: thumbs, ready: thumbToolsKnown } = createThumbs({
      db,
      ops,
      bus,
      tenantOf: (id) => storageTenant(catalogue.repo, id),
      tenants: () => storagesRepo.tenants(),
      cacheDir: dirs.thumbs,
      secretKey,
      urlTtlMs: config.thumbsUrlTtl,
      log,
    });
    thumbDispatch.register(thumbs);
    textIndex.register(ops);
    const docserver = createDocserver({
      db,
      files,
      catalogue,
      external,
      secretKey,
      publicUrl: config.publicUrl,
      stagingDir: dirs.staging,
      maxUploadBytes: config.maxUploadBytes,
      log,
    });
    const archives = await createArchives({
      files,
      catalogue,
      queue,
      actors: auth.actors,
      maxArchiveBytes: config.maxArchiveBytes,
      buildDir: join(dirs.staging, 'zip-builds'),
    });
    const uploads = createUploads({
      db,
      files,
      catalogue,
      auth,
      stagingDir: config.stagingDir || dirs.staging,
      limits: { maxUploadBytes: config.maxUploadBytes, maxChunkBytes: config.maxChunkBytes, sessionTtlMs: config.uploadSessionTtl },
      lease: { instanceId, leaseMs: config.opLease },
    });
    const mailer = createMailer(
      { host: config.smtpHost, port: config.smtpPort, user: config.smtpUser, password: config.smtpPassword, from: config.smtpFrom, secure: config.smtpSecure },
      logFn,
    );
    cleanups.unshift(() => mailer.close());
    const shares = createShares({
      db,
      auth,
      catalogue,
      files,
      settings,
      bus,
      uploads,
      mailer,
      secretKey,
      publicUrl: config.publicUrl,
      tenantAddress: tenants ? (t, installation) => tenants.address(t, installation) : undefined,
      zipDir: dirs.zips,
      zipWarmMaxBytes: config.shareZipWarmMaxBytes,
      zipMaxAgeMs: config.shareZipMaxAge,
      log: logFn,
      warmLane: (signal) => governor.acquire(signal),
      guardLimits: () => ({
        maxStreams: settings.get('public_link_max_streams') ?? config.publicLinkMaxStreams,
        maxAddresses: settings.get('public_link_max_addresses') ?? config.publicLinkMaxAddresses,
      }),
      guardLease: { instanceId, leaseMs: config.opLease },
      quotas,
    });
    cleanups.unshift(() => shares.zips.stopAll());
    cleanups.unshift(() => shares.guard.stop());
    const bell = new Bell(db, (t, uid, n) => hub.toUser(t, uid, { event: 'notification', data: n }));
    // The bell and the infection mail reach the admins of the event's tenant (docs/tenants.md).
    const admins = async (t: TenantScope) => (await auth.repo.list(t, { role: 'admin', limit: 1000 })).filter((u) => !u.disabled);
    attachBell(bus, bell, { admins: async (t) => (await admins(t)).map((u) => u.id), dropOwner: (id) => [id] });
    const webhooks = new Webhooks(db, queue, { targets: () => protection.webhooks.forDelivery(), log: logFn });
    webhooks.attach(bus);
    attachInfectionMail(bus, mailer, async (t) => (await admins(t)).map((u) => u.email), logFn);
    const updater = createUpdater({
      ...updaterOptionsFromConfig(config),
      snapshotDb: (base) => db.snapshot(base),
      // An automatic upgrade waits while long ops run (docs/desktop.md, "Keeping the computer awake").
      busy: () => queue.runningKeepingAwake().length > 0,
      emit: (event, payload) => void bus.emit(DEFAULT_TENANT, event, payload as never),
      log: { info: (m) => log.info(m), warn: (m) => log.warn(m) },
    });
    const appPlugins = createAppPlugins({
      db,
      bus,
      files,
      queue,
      actors: auth.actors,
      settings,
      version: config.version,
      shares: shares.service,
      enabled: config.appPlugins,
      memoryBytes: config.appPluginMemory * 1024 * 1024,
      wakeup: { intervalMs: config.appWakeupInterval, firstDelayMs: config.appWakeupFirst },
      stateOf: async (p) => parseItems((await catalogue.nodes.get(catalogue.storageOf(p.storage_id), p.rel))?.app_state ?? null),
      // Apps are installed per tenant (docs/tenants.md, "Step 1: apps"): an app's people are its tenant's.
      findUsers: async (t, q, limit) =>
        (await auth.repo.list(t, { q, limit: limit * 2 }))
          .filter((u) => !u.disabled)
          .slice(0, limit)
          .map((u) => ({ id: u.id, username: u.username, email: u.email })),
      findUser: async (t, id) => {
        const u = await auth.repo.byId(t, id);
        return u && !u.disabled ? { id: u.id, username: u.username, email: u.email } : null;
      },
      people: (t) => auth.repo.principals(t),
      log: (m) => log.info(m),
    });
    cleanups.unshift(() => appPlugins.close());
    const appStore = createAppStore({
      db,
      bus,
      plugins: appPlugins,
      settings,
      version: config.version,
      timeoutMs: config.appStoreTimeout,
      dbDir: db.dialect === 'sqlite' ? dirname(dirs.db) : null,
      channel,
      log: logFn,
      drivers: {
        // Drivers installed from a store join the registry live, probed first as discovery does at start.
        plugins: {
          probe: async (program) => {
            const m = await loadPluginDriver(program, { serviceVersion: config.version });
            return { driver: m.descriptor.driver, register: () => registry.register(m) };
          },
          has: (driver) => !!registry.get(driver),
          remove: (driver) => registry.unregister(driver),
        },
        dir: dirs.plugins,
        usedBy: (driver) =>
          storagesRepo
            .everyTenant()
            .filter((s) => s.driver === driver)
            .map((s) => s.name),
      },
    });
    await appStore.loadLanguages();
    const appStoreUpdates = createStoreUpdates({ db, bus, plugins: appPlugins, store: appStore });
    const appStoreLicences = createStoreLicences({ db, bus, plugins: appPlugins, store: appStore, timeoutMs: config.appStoreTimeout });
    const appStoreInstalls = new StoreInstallOps({ store: appStore, queue, actors: auth.actors });
    appStoreInstalls.register();
    const backups = new BackupService({
      sources: { db, dirs, secretKeyFile: config.secretKeyFile, configFile: config.config, version: config.version },
      settings,
      files,
      queue,
      log: logFn,
    });
    backups.register();
    assertEveryJobHandled(queue);

    const capabilities = (): Capabilities => ({
      version: config.version,
      thumbs: thumbCapabilities(),
      external: { docserver_url: external.docserver()?.url ?? '', diagram_url: external.diagramUrl(), text_diagram: true },
      auth: oidc.config.active()
        ? { drivers: ['local', 'oidc'], allow_signup: settings.get('allow_signup'), oidc_label: oidc.config.label() }
        : { drivers: ['local'], allow_signup: settings.get('allow_signup') },
      limits: { max_upload_bytes: config.maxUploadBytes, max_archive_bytes: config.maxArchiveBytes, max_chunk_bytes: config.maxChunkBytes },
      storage_drivers: registry.list().map((d) => d.driver),
      antivirus: protection.antivirus.active,
      antivirus_mode: protection.antivirus.mode,
      share_max_ttl_days: settings.get('share_max_ttl_days'),
      newdoc_types: newdocs.types(),
      app_plugins: appPlugins.capability(),
      assistant: { state: 'off', permitted: false, button: false },
    });

    const gateways = createGatewayCore({ auth, tenants, files, queue, uploads, settings });
    const vault = createVault({ db, files, catalogue, auth });
    const assistant = createAssistant({
      db,
      bus,
      settings,
      secretKey,
      files,
      shares,
      archives,
      queue,
      protection,
      publicUrl: config.publicUrl,
      createProvider: opts.assistantProvider ?? createProvider,
    });
    await thumbToolsKnown;

    return {
      config,
      /** No other server ran on the database at this start (always on SQLite). */
      alone,
      log,
      logFn,
      dirs,
      secretKey,
      db,
      channel,
      bus,
      hub,
      queue,
      governor,
      scheduler,
      auth,
      /** The tenants requests select (multi-tenant mode only; null: every request is tenant 1's). */
      tenants,
      /** The operator's tenant routes' service (multi-tenant mode only). */
      platformTenants,
      tenantPurge,
      brandings,
      /** The tenants' quotas (multi-tenant mode only). */
      quotas,
      oidc,
      settings,
      registry,
      manager,
      catalogue,
      io,
      ops,
      files,
      homes,
      protection,
      docserver,
      thumbs,
      thumbDispatch,
      textIndex,
      archives,
      uploads,
      shares,
      mailer,
      bell,
      webhooks,
      updater,
      gateways,
      replication,
      assistant,
      appPlugins,
      appStore,
      appStoreUpdates,
      appStoreLicences,
      appStoreInstalls,
      backups,
      vault,
      capabilities,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

export type Services = Awaited<ReturnType<typeof compose>>;
