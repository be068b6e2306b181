/**
 * The server: the composition root's services (compose.ts), plus HTTP, the
 * schedules and the background work started. `startServer` is what the CLI
 * and the desktop host call; it returns once the listener is bound.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './config';
import type { PowerHostMessage, UplinkHostMessage } from './contract';
import { hostLine } from './lib/host-line';
import { DEFAULT_TENANT, TenantsRepo, type Db, type TenantScope } from './db';
import { folderKey, isOpNotice, OP_NOTICE, type EventBus } from './events';
import { governorHostStatus, KeepAwake, type JobQueue, type OpChange } from './jobs';
import type { Auth } from './auth';
import { seedDefaultStorage } from './catalogue/seed';
import type { FileService } from './files';
import { scheduleProtection, type Protection } from './protection';
import type { DataDirLayout } from './lib/data-dir';
import type { Logger } from './lib/log';
import { DownloadZip } from './archives';
import { hasHost, toHost } from './lib/host-port';
import { HOST_STATUS_EVERY_MS, replicaHostStatus } from './replication';
import { FirstStorage, offlineHostStatus } from './catalogue';
import { uiPath } from './lib/paths';
import { compose, type ComposeOptions, type Services } from './compose';
import { buildApp } from './http/app';
import { authRoutes } from './http/routes/auth.routes';
import { adminUserRoutes } from './http/routes/admin-users.routes';
import { oidcRoutes } from './http/routes/oidc.routes';
import { adminOidcRoutes } from './http/routes/admin-oidc.routes';
import { adminMfaRoutes, mfaRoutes } from './http/routes/mfa.routes';
import { accessRoutes, adminAccessRoutes, keyIdentity } from './http/routes/access.routes';
import { adminRoleRoutes } from './http/routes/admin-roles.routes';
import { adminGatewayRoutes } from './http/routes/admin-gateways.routes';
import { adminNfsRoutes } from './http/routes/admin-nfs.routes';
import { gatewayRoutes } from './http/routes/gateways.routes';
import { SshKeys } from './auth/ssh-keys';
import { actorSpec } from './auth';
import { sshKeyRoutes } from './http/routes/ssh-keys.routes';
import { vaultRoutes } from './http/routes/vault.routes';
import { capabilitiesRoutes } from './http/routes/capabilities.routes';
import { networkRoutes } from './http/routes/network.routes';
import { opsRoutes } from './http/routes/ops.routes';
import { realtimeRoutes } from './http/routes/realtime.routes';
import { adminStorageRoutes } from './http/routes/admin-storages.routes';
import { platformTenantRoutes } from './http/routes/platform-tenants.routes';
import { adminBrandingRoutes, publicBrandingRoutes } from './http/routes/branding.routes';
import { tenantQuotaRoutes } from './http/routes/tenant-quotas.routes';
import { adminHomesRoutes } from './http/routes/admin-homes.routes';
import { adminMeterRoutes } from './http/routes/admin-meter.routes';
import { adminGovernorRoutes } from './http/routes/admin-governor.routes';
import { replicationRoutes } from './http/routes/replication.routes';
import { quotaRoutes } from './http/routes/quota.routes';
import { thumbRoutes } from './http/routes/thumbs.routes';
import { filesPdfRoutes } from './http/routes/files-pdf.routes';
import { archiveRoutes } from './http/routes/archives.routes';
import { filesRoutes } from './http/routes/files.routes';
import { filesVerbRoutes } from './http/routes/files-verbs.routes';
import { uploadRoutes } from './http/routes/uploads.routes';
import { shareRoutes } from './http/routes/shares.routes';
import { sharePublicRoutes } from './http/routes/shares-public.routes';
import { adminUplinkRoutes } from './http/routes/admin-uplink.routes';
import { adminBackupRoutes } from './http/routes/admin-backups.routes';
import { publicEgress } from './http/public/egress';
import { TenantEgress } from './http/public/tenant-egress';
import { EgressShaper } from './lib/egress';
import { parseAddressList } from './lib/net-addr';
import { shareDropRoutes } from './http/routes/shares-drop.routes';
import { updateRoutes } from './http/routes/update.routes';
import { protectionRoutes } from './http/routes/protection.routes';
import { webhookRoutes } from './http/routes/protection-webhooks.routes';
import { trashRoutes } from './http/routes/trash.routes';
import { versionsRoutes } from './http/routes/versions.routes';
import { filesZipRoutes } from './http/routes/files-zip.routes';
import { filesRefreshRoutes } from './http/routes/files-refresh.routes';
import { notificationRoutes } from './http/routes/notifications.routes';
import { adminExternalRoutes, docserverRoutes } from './http/routes/docserver.routes';
import { actor, type AppState, type Ctx } from './http/context';
import { assistantRoutes } from './http/routes/assistant.routes';
import { appPluginRoutes } from './http/routes/app-plugins.routes';
import { languagesRoutes } from './http/routes/languages.routes';
import { appStoreRoutes } from './http/routes/app-store.routes';
import { appsPublicRoutes } from './http/routes/apps-public.routes';
import { openapiRoutes } from './http/routes/openapi.routes';
import { VERSION } from './version';
import type { ProviderFactory } from './assistant/providers/types';
import { publicOnly } from './http/middlewares/public-only';
import { davMiddleware } from './http/dav';
import { trackActivity } from './http/middlewares/activity';
import { Listeners } from './http/listener';
import { startFtpGateway } from './gateways/ftp';
import { startS3Gateway } from './gateways/s3';
import { NfsExports, NfsExportsRepo, startNfsGateway } from './gateways/nfs';
import { createHealth } from './http/health';
import { Metrics } from './http/metrics/metrics';
import { metricsRoutes } from './http/routes/metrics.routes';
import type { Router } from '@koa/router';
import { PdfRenditions } from './thumbs';

export interface RunningServer {
  url: string;
  port: number;
  publicPort: number | null;
  /** Graceful stop: stop accepting, finish in-flight requests up to the bound, stop workers, close the database. */
  close(): Promise<void>;
  /** Pauses or resumes background work. */
  pause(paused: boolean): void;
  /** The host's power, presence and sleep reports (docs/server-host-protocol.md). */
  power(m: PowerHostMessage): void;
  // Exposed for tests and the CLI.
  db: Db;
  auth: Auth;
  queue: JobQueue;
  bus: EventBus;
  /** The catalogue, plus its io face for white-box tests (the driver pool's `driverFor` and the write gate). */
  catalogue: Services['catalogue'] & { driverFor: Services['io']['drivers']['driverFor']; gate: Services['io']['gate'] };
  files: FileService;
  protection: Protection;
  registry: Services['registry'];
  dirs: DataDirLayout;
  services: Services;
  /** The feature routers in dispatch order (the OpenAPI check compares them with the document). */
  routers: ReadonlyArray<Router<AppState>>;
}

export interface StartOptions {
  logger?: Logger;
  /** Where the built web UI lives (default: dist/renderer beside the bundle). */
  rendererDir?: string;
  /** The assistant's provider adapters (tests pass a scripted one). */
  assistantProvider?: ProviderFactory;
  /** How local storages' volumes are identified (default: this OS's probe; tests wrap it to hold an answer back). */
  volumeProbe?: ComposeOptions['volumeProbe'];
}

const here = fileURLToPath(new URL('.', import.meta.url));
/** The bundle runs from dist/server (UI in dist/renderer); sources run from server/. */
const defaultRendererDir = () => join(here, /dist[\\/]server[\\/]?$/.test(here) ? '../renderer' : '../dist/renderer');

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const t0 = Date.now();
  const sv = await compose(config, { role: 'server', logger: opts.logger, assistantProvider: opts.assistantProvider, volumeProbe: opts.volumeProbe });
  const { log, logFn, db, bus, hub, queue, scheduler, auth, catalogue, io, files, protection, thumbs, uploads, shares, bell, webhooks, updater, dirs } = sv;
  try {
    await seedFirstRun(config, auth, log);
    await seedDefaultStorage(config, db, catalogue.repo, catalogue.storages, log);
    // Change frames for browsers on this instance, whichever instance made the change (several instances: the change channel).
    bus.onEveryInstance('folder.changed', (e) => {
      const storage = catalogue.repo.ofAnyTenant(e.storage_id);
      if (!storage) return;
      const name = storage.name;
      // Only the storage's tenant's connections (docs/tenants.md, "Every door").
      hub.toFolder(storage, folderKey(e.storage_id, e.folder), {
        event: 'change',
        data: { folder: uiPath(name, e.folder), kind: e.kind, path: uiPath(name, e.path), name: e.name },
      });
    });
    // Native notifications in the desktop shell (docs/server-host-protocol.md).
    bus.on('file.infected', (e) => toHost({ type: 'notify', event: 'file.infected', title: e.title, body: e.body }));
    bus.on('drop.received', (e) =>
      toHost({ type: 'notify', event: 'drop.received', title: 'Files received', body: `${e.files.length} file(s) in ${e.folder}` }),
    );
    bus.on('storage.offline', (e) => toHost({ type: 'notify', event: 'storage.offline', title: `Storage ${e.name} is offline`, body: e.reason }));
    bus.on('storage.volume_mismatch', (e) =>
      toHost({ type: 'notify', event: 'storage.volume_mismatch', title: `A different drive is at the place of ${e.name}`, body: e.reason }),
    );
    bus.on('update_available', (e) => toHost({ type: 'notify', event: 'update_available', title: `Filedock ${e.version} is available`, body: e.notes ?? '' }));
    // Volumes before anything reaches a driver (upload recovery, sync): a storage whose drive is unplugged is held first.
    await catalogue.volumes.start(config.volumeCheckInterval);
    await bus.flush(); // events a crash left unpublished
    const recovered = await uploads.recover({ everyone: sv.alone });
    if (recovered.finished || recovered.reopened) log.info(`uploads interrupted by a restart: ${recovered.finished} finished, ${recovered.reopened} reopened`);

    // The desktop's sleep inhibitor follows transfers and long ops (jobs/keep-awake.ts).
    const activity = trackActivity(
      () => queue.runningCount,
      () => keepAwake.changed(),
    );
    const keepAwake = new KeepAwake(queue, activity.transfers, toHost);
    // Op frames reach the owner's browsers on every instance: the running one names the op on the change
    // channel (state changes and progress, at most every PROGRESS_WRITE_MS), the others read its row.
    // The op is read, and its frame sent, in the op's tenant.
    const opFrame = async (op: OpChange) => {
      const row = op.visible && op.owner_id !== null ? await queue.get(op, op.id) : null;
      if (row) hub.toUser(op, op.owner_id!, { event: 'op', data: { op: await sv.appPlugins.jobs.present(op, row, config.locale) } });
    };
    // A frame is a hint (the ops list is read again on reconnect): a database busy meanwhile skips it.
    const frame = (op: OpChange) => void opFrame(op).catch(() => {});
    queue.onOpChange((op) => {
      frame(op);
      if (op.visible && op.owner_id !== null) sv.channel.publish(OP_NOTICE, op);
      activity.changed();
    });
    sv.channel.subscribe((event, data) => {
      if (event === OP_NOTICE && isOpNotice(data) && hub.hasUser(data.owner_id)) frame(data);
    });

    const secureCookies = config.publicUrl.startsWith('https:');
    const json = config.maxJsonBytes;
    const tenants = new TenantsRepo(db);
    /** Links held suspended now in every tenant (the installation's health and the tray's uplink line). */
    const suspendedLinkCount = async () => {
      let n = 0;
      for (const t of await tenants.list()) n += await shares.service.suspendedCount(t);
      return n;
    };
    const sshKeys = new SshKeys(db, auth.repo, bus);
    const nfsExports = new NfsExportsRepo(db);
    const access = { auth, bus, files, catalogue, maxJsonBytes: json, secureCookies };
    const pdfs = new PdfRenditions(dirs.pdf);
    // Uplink protection of public links (docs/desktop.md): one egress budget, settings over environment.
    const egressBps = () => (sv.settings.get('public_egress_mbps') ?? config.publicEgressMbps) * 125_000;
    const shaper = new EgressShaper(egressBps());
    sv.settings.onChange((key) => {
      if (key === 'public_egress_mbps') shaper.setRate(egressBps());
    });
    const admit = publicEgress({ shaper, guard: shares.guard, tenants: sv.quotas && new TenantEgress(shaper, (t) => sv.quotas!.egressShare(t)) });
    // GET /metrics (docs/operations.md, "Metrics"): off by default; each figure is read from its module at scrape time.
    const metrics = new Metrics({
      settings: sv.settings,
      secretKey: sv.secretKey,
      bus,
      log: logFn,
      sources: {
        dbWaits: () => db.waits.snapshot(),
        queueDepth: () => queue.depth(),
        syncRuns: () => catalogue.syncer.runsFinished,
        thumbnails: () => thumbs.outcomes,
        scans: () => protection.antivirus.outcomes,
        replication: () => sv.replication.repair.installationStatus(),
        gatewaySessions: () => sv.gateways.registry.status().sessions,
      },
    });
    const routers: Array<Router<AppState>> = [
      ...metricsRoutes({ metrics, bus, maxJsonBytes: json }),
      capabilitiesRoutes((ctx: Ctx) => ({ ...sv.capabilities(), assistant: sv.assistant.capability(ctx.state.principal ? actor(ctx) : null) })),
      assistantRoutes({ assistant: sv.assistant, bus, maxJsonBytes: json }),
      networkRoutes({ host: config.host, publicUrl: config.publicUrl }),
      authRoutes({
        auth,
        secureCookies,
        maxJsonBytes: json,
        publicUrl: config.publicUrl,
        keyIdentity: keyIdentity(catalogue),
        firstStorage: new FirstStorage(catalogue.storages, config.defaultStorageName),
        homeOf: (id) => sv.homes.homeOf(id),
        multiTenant: config.multiTenant,
      }),
      mfaRoutes({ auth, secureCookies, maxJsonBytes: json, publicUrl: config.publicUrl }),
      adminMfaRoutes({ auth }),
      adminUserRoutes({ auth, db, settings: sv.settings, bus, maxJsonBytes: json }),
      accessRoutes(access),
      adminAccessRoutes(access),
      adminRoleRoutes({ auth, maxJsonBytes: json }),
      adminGatewayRoutes({ registry: sv.gateways.registry, settings: sv.settings, maxJsonBytes: json }),
      adminNfsRoutes({ exports: new NfsExports(nfsExports, sv.gateways, (spec, request) => auth.actors.restore(spec, request), bus), maxJsonBytes: json }),
      gatewayRoutes({ registry: sv.gateways.registry }),
      sshKeyRoutes({ sshKeys, maxJsonBytes: json }),
      vaultRoutes({ vault: sv.vault, maxJsonBytes: json }),
      oidcRoutes({ oidc: sv.oidc, secureCookies }),
      adminOidcRoutes({ oidc: sv.oidc, maxJsonBytes: json }),
      opsRoutes({ queue, present: (s, op, lang) => sv.appPlugins.jobs.present(s, op, lang) }),
      appPluginRoutes({ plugins: sv.appPlugins, settings: sv.settings, bus, maxJsonBytes: json }),
      appStoreRoutes({
        store: sv.appStore,
        updates: sv.appStoreUpdates,
        licences: sv.appStoreLicences,
        installs: sv.appStoreInstalls,
        settings: sv.settings,
        bus,
        maxJsonBytes: json,
        log: logFn,
      }),
      languagesRoutes(),
      realtimeRoutes({
        hub,
        resolveFolder: (a, path) => {
          if (path === '/' || path === '') return null;
          // A folder the person only passes through on the way to theirs (a home's parents, a key's root's parents)
          // streams no change frames: they would name entries the listing hides.
          const t = files.forActor(a).target(path, 'viewer', { passage: true });
          return t.passage !== undefined ? null : folderKey(t.storage.id, t.rel);
        },
        folderOpened: (a, path) => {
          const t = files.forActor(a).target(path);
          return catalogue.syncer.openFolder(t.storage.id, t.rel);
        },
      }),
      adminStorageRoutes({ catalogue, maxJsonBytes: json }),
      ...(sv.platformTenants && sv.quotas
        ? [
            platformTenantRoutes({ tenants: sv.platformTenants, brandings: sv.brandings, quotas: sv.quotas, catalogue, maxJsonBytes: json }),
            tenantQuotaRoutes(sv.quotas),
          ]
        : []),
      adminBrandingRoutes({ brandings: sv.brandings, maxJsonBytes: json }),
      publicBrandingRoutes({ brandings: sv.brandings }),
      adminHomesRoutes({ homes: sv.homes, settings: sv.settings, bus, maxJsonBytes: json }),
      adminMeterRoutes({ catalogue, settings: sv.settings, maxJsonBytes: json }),
      adminGovernorRoutes({ settings: sv.settings, governor: sv.governor, bus, maxJsonBytes: json }),
      replicationRoutes({ replication: sv.replication, bus, maxJsonBytes: json }),
      adminBackupRoutes({ backups: sv.backups, bus, maxJsonBytes: json }),
      quotaRoutes({ catalogue, files, auth, bus }),
      thumbRoutes({ thumbs, files }),
      filesPdfRoutes({ files, pdfs }),
      archiveRoutes({ archives: sv.archives, maxJsonBytes: json }),
      filesRefreshRoutes({ catalogue, files, maxJsonBytes: json }),
      filesZipRoutes({ files, zips: new DownloadZip(config.maxArchiveBytes), log: logFn }),
      updateRoutes({ updater, bus, maxJsonBytes: json }),
      filesRoutes({ files }),
      filesVerbRoutes({ files, maxJsonBytes: json }),
      uploadRoutes({ uploads, maxJsonBytes: json, refusedBodyBytes: config.maxChunkBytes }),
      protectionRoutes({ protection, maxJsonBytes: json }),
      webhookRoutes({ protection, webhooks, maxJsonBytes: json }),
      trashRoutes({ protection, catalogue, files, maxJsonBytes: json }),
      versionsRoutes({ protection, files, maxJsonBytes: json }),
      notificationRoutes({ bell, maxJsonBytes: json }),
      adminExternalRoutes({ docserver: sv.docserver, bus, maxJsonBytes: json }),
      docserverRoutes({ docserver: sv.docserver, maxJsonBytes: json }),
      shareRoutes({ shares, maxJsonBytes: json }),
      // Before the share routes: /s/{token} of an app link is its app page; other tokens fall through.
      appsPublicRoutes({ plugins: sv.appPlugins, shares, rendererDir: opts.rendererDir ?? defaultRendererDir(), secureCookies, admit }),
      sharePublicRoutes({ shares, maxJsonBytes: json, admit, log: logFn, rendererDir: opts.rendererDir ?? defaultRendererDir() }),
      adminUplinkRoutes({
        settings: sv.settings,
        bus,
        maxJsonBytes: json,
        effective: () => ({
          public_egress_mbps: egressBps() / 125_000,
          public_link_max_streams: sv.settings.get('public_link_max_streams') ?? config.publicLinkMaxStreams,
          public_link_max_addresses: sv.settings.get('public_link_max_addresses') ?? config.publicLinkMaxAddresses,
        }),
      }),
      shareDropRoutes({ shares, maxJsonBytes: json }),
    ];
    const health = createHealth({
      db,
      admission: { maxActive: config.admissionMaxActive, maxQueued: config.admissionMaxQueue, maxWaitMs: config.admissionMaxWait },
      // The recovery point of the backups, for the admin console's health view.
      extra: [
        ['replication', () => sv.replication.repair.installationStatus()],
        ['egress', async () => ({ ...shaper.stats(), public_requests: shares.guard.activeStreams(), suspended_links: await suspendedLinkCount() })],
        // Budget use of the metered storages (catalogue/meter.ts).
        ['request_budgets', () => catalogue.meter.status()],
        // Storages offline now; a removable drive's side of it (catalogue/volumes.ts).
        ['offline_storages', () => catalogue.volumes.offline()],
        // Background work: lanes, CPU against the budget, pauses, power (jobs/governor.ts).
        ['governor', () => sv.governor.status()],
        // The sleep inhibitor asked of the host and the long ops a restart resumes (docs/desktop.md).
        ['sleep_inhibitor', () => keepAwake.status()],
        // Search inside documents: per storage, indexed, waiting and failed files (fulltext/indexer.ts).
        [
          'text_index',
          async () => ({
            enabled: config.textIndex,
            storages: (await sv.textIndex.status()).map((x) => ({ ...x, name: catalogue.repo.ofAnyTenant(x.storage_id)?.name ?? String(x.storage_id) })),
          }),
        ],
      ],
    });
    routers.push(
      health.routes,
      openapiRoutes(() => routers, VERSION),
    );
    const appOptions = {
      auth,
      tenants: sv.tenants,
      brandings: sv.brandings,
      lang: config.locale,
      trustedProxies: parseAddressList(config.trustedProxies).list,
      routers,
      rendererDir: opts.rendererDir ?? defaultRendererDir(),
      log: logFn,
      appOrigins: () => {
        const e = sv.capabilities().external;
        return { docserver: e.docserver_url, diagram: e.diagram_url };
      },
      onDbBusy: () => db.waits.sawBusy(),
      afterAuth: [health.heavy],
    };
    const app = buildApp({ ...appOptions, before: [metrics.middleware, activity.middleware, ...davMiddleware(sv.gateways, db, config)] });
    const publicApp = config.publicListen ? buildApp({ ...appOptions, before: [metrics.middleware, publicOnly, activity.middleware] }) : null;

    // The scoped tables are swept tenant by tenant (each sweep names its tenant).
    const perTenant = (sweep: (t: TenantScope) => Promise<unknown>) => async () => {
      for (const t of await tenants.list()) await sweep(t);
    };
    scheduler.every(
      'sessions.sweep',
      3_600_000,
      perTenant((t) => auth.sessions.sweepExpired(t)),
    );
    scheduler.every(
      'oidc.sweep',
      3_600_000,
      perTenant((t) => sv.oidc.signIn.sweep(t)),
    );
    scheduler.every('ops.prune', 86_400_000, async () => void (await queue.prune(30 * 86_400_000)));
    scheduler.every('outbox.prune', 86_400_000, () => void bus.prune(7 * 86_400_000));
    scheduler.every('thumbs.sweep', config.thumbsSweepInterval, () => void thumbs.sweep());
    scheduler.every('pdf.sweep', 3_600_000, () => void pdfs.sweep());
    scheduler.every('uploads.sweep', 3_600_000, () => void uploads.sweep());
    scheduler.every(
      'webhooks.prune',
      86_400_000,
      perTenant((t) => webhooks.prune(t, 30 * 86_400_000)),
    );
    scheduler.every('shares.sweep', 3_600_000, perTenant(shares.sweep));
    scheduler.every('assistant.sweep', 3_600_000, perTenant(sv.assistant.sweep));
    scheduler.every('sharezip.warm', 5 * 60_000, async () => void shares.zips.warm(await tenants.list()));
    scheduler.every('app_store.updates', 86_400_000, async () => void (await sv.appStoreUpdates.check()));
    scheduler.every('app_store.revocations', 86_400_000, async () => void (await sv.appStoreLicences.refreshAll()));
    scheduleProtection(protection, scheduler, logFn);
    sv.replication.schedule(scheduler);
    sv.backups.schedule(scheduler);
    sv.governor.start();
    await queue.start({ alone: sv.alone });
    // Deleted tenants whose rows a restart cut off from their purge (docs/tenants.md, "Step 4: the leftovers").
    sv.tenantPurge.resume().catch((e) => log.warn('queueing the purge of deleted tenants at start failed', e));
    // Files a crash left waiting for text extraction with no op queued for them.
    if (config.textIndex) sv.textIndex.resume().catch((e) => log.warn('queueing text extraction at start failed', e));
    await sv.appPlugins.start();
    await catalogue.syncer.startAll();
    updater.start();

    const listeners = new Listeners({
      headersTimeoutMs: config.httpHeadersTimeout,
      idleTimeoutMs: config.httpIdleTimeout,
      keepAliveTimeoutMs: config.httpKeepAliveTimeout,
    });
    const port = await listeners.create(app.callback()).listen(config.port, config.host);
    let publicPort: number | null = null;
    if (publicApp) {
      const at = config.publicListen.lastIndexOf(':');
      publicPort = await listeners
        .create(publicApp.callback(), config.publicMaxConnsPerIp)
        .listen(Number(config.publicListen.slice(at + 1)), config.publicListen.slice(0, at).replace(/^\[|\]$/g, ''));
      log.info(`public links listener on ${config.publicListen.slice(0, at)}:${publicPort} (share and drop routes only)`);
    }
    const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    const url = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
    log.info(`listening on ${url} (started in ${Date.now() - t0} ms, data in ${dirs.root})`);
    sv.gateways.registry.listener({
      protocol: 'webdav',
      enabled: config.webdav,
      listen: config.webdav ? `${config.host}:${port}` : null,
      url: config.webdav ? `${url}/dav/` : null,
      error: null,
    });
    // The SFTP gateway (and ssh2 with it) loads only when it is configured.
    const sftp = config.sftpListen
      ? await (await import('./gateways/sftp')).startSftpGateway({
          listen: config.sftpListen,
          hostKeyPath: join(dirs.state, 'sftp_host_ed25519_key'),
          core: sv.gateways,
          log,
          publicKey: (login, blob, req, signed) => {
            // `name@slug` selects the tenant as for a password; an unknown or suspended one has no keys to offer.
            const { scope, name } = sv.gateways.auth.select(login);
            return scope ? sshKeys.signIn(scope, name, blob, req, 'sftp', signed) : Promise.resolve(null);
          },
          restore: (a) => auth.actors.restore(actorSpec(a), a.request),
        })
      : null;
    const ftp = await startFtpGateway({ config, core: sv.gateways, stateDir: dirs.state, log });
    const s3 = config.s3Listen
      ? await startS3Gateway({ core: sv.gateways, db, stagingDir: dirs.staging, listen: config.s3Listen, idleTimeoutMs: config.httpIdleTimeout, log })
      : null;
    const nfs = config.nfsListen
      ? await startNfsGateway({
          listen: config.nfsListen,
          core: sv.gateways,
          exports: nfsExports,
          secretKey: sv.secretKey,
          stagingDir: dirs.staging,
          log,
          restore: (spec, request) => auth.actors.restore(spec, request),
        })
      : null;
    toHost({ type: 'ready', port, url });
    keepAwake.flush();
    // The desktop tray's "Backups" line: checked every 10 s (a timer, not the scheduler: nothing to record), sent when it changes.
    const backups = hasHost() ? replicaHostStatus(sv.replication.repair, toHost) : null;
    backups?.tick();
    const backupsTimer = backups ? setInterval(() => backups.tick(), HOST_STATUS_EVERY_MS).unref() : null;
    // The tray's offline storages: at once when a drive goes or comes, and on the same 10 s check.
    const offlineTray = hasHost() ? offlineHostStatus(() => catalogue.volumes.offline(), toHost) : null;
    for (const e of ['storage.offline', 'storage.online'] as const) bus.on(e, () => offlineTray?.tick());
    // The tray's uplink and request-budget lines, on the same check.
    const mbps = (bps: number) => Math.round(bps / 12_500) / 10;
    // The suspended links are counted asynchronously before each check; the line shows the last count.
    let suspendedLinks = 0;
    const countSuspended = () =>
      suspendedLinkCount().then(
        (n) => void (suspendedLinks = n),
        () => undefined,
      );
    const uplinkTray = hasHost()
      ? hostLine<UplinkHostMessage>(async () => {
          const e = shaper.stats();
          const budgets = (await catalogue.meter.status())
            .filter((b) => b.budget_per_day > 0)
            .map(({ name, used_today, budget_per_day, exhausted }) => ({ name, used_today, budget_per_day, exhausted }));
          return { type: 'uplink', egress_mbps: mbps(e.current_bps), budget_mbps: mbps(e.budget_bps), suspended_links: suspendedLinks, budgets };
        }, toHost)
      : null;
    const trayLines = [offlineTray, uplinkTray].filter((l) => l !== null);
    for (const l of trayLines) l.tick();
    const trayTick = () => void countSuspended().then(() => trayLines.forEach((l) => l.tick()));
    if (uplinkTray) trayTick();
    const trayTimer = trayLines.length ? setInterval(trayTick, HOST_STATUS_EVERY_MS).unref() : null;
    // The tray's "Background" line, sent when what it shows changes.
    const stopGovernorHost = hasHost() ? governorHostStatus(sv.governor, toHost) : null;

    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        log.info('shutting down');
        if (backupsTimer) clearInterval(backupsTimer);
        if (trayTimer) clearInterval(trayTimer);
        stopGovernorHost?.();
        await listeners.close(config.shutdownGrace);
        await sftp?.close();
        await ftp?.close();
        await s3?.close();
        await nfs?.close();
        await scheduler.stop();
        updater.stop();
        await catalogue.syncer.stopAll();
        await queue.stop(2000);
        sv.governor.stop();
        keepAwake.close();
        await bus.flush();
        health.stop();
        await sv.close();
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
        sv.governor.setPaused(p);
      },
      power: (m) => sv.governor.hostMessage(m),
      db,
      auth,
      queue,
      bus,
      catalogue: { ...catalogue, driverFor: (id) => io.drivers.driverFor(id), gate: io.gate },
      files,
      protection,
      registry: sv.registry,
      dirs,
      services: sv,
      routers,
    };
  } catch (e) {
    await sv.close();
    throw e;
  }
}

/** First run: the admin from SERVICE_ADMIN_*, or the desktop owner; otherwise the setup page waits. */
async function seedFirstRun(config: Config, auth: Auth, log: Logger): Promise<void> {
  // The first admin is tenant 1's: the installation's platform operator (docs/tenants.md).
  if ((await auth.repo.count(DEFAULT_TENANT)) > 0) return;
  if (config.adminEmail && config.adminPassword) {
    const u = await auth.users.create(DEFAULT_TENANT, { email: config.adminEmail, password: config.adminPassword, role: 'admin' });
    await auth.repo.makePlatformOperator(u.id);
    log.info(`created the first admin ${config.adminEmail}`);
  } else if (config.desktopBootstrap) {
    const { randomBytes } = await import('node:crypto');
    const u = await auth.users.create(DEFAULT_TENANT, {
      email: config.adminEmail || 'owner@filedock.local',
      username: 'owner',
      password: randomBytes(24).toString('base64url'),
      role: 'admin',
    });
    await auth.repo.makePlatformOperator(u.id);
    log.info('created the desktop owner account');
  } else {
    log.warn('no users yet: open the web UI from this computer to create the first admin');
  }
}
