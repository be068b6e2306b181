/**
 * The desktop shell's wiring: it owns the Electron objects (app, tray, windows,
 * IPC) and connects them to the pure modules beside it, which hold every
 * decision (docs/desktop.md). Electron's API comes in as a parameter, so
 * `main.ts` is one call and a test drives all of this under plain Node with a
 * stand-in for Electron (`shell.test.ts`).
 */
import type { BrowserWindow, IpcMainEvent, IpcMainInvokeEvent } from 'electron';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SettingsStore } from './desktop-settings';
import { advertise, lanUrl, nfsListener, nfsUrl, qrDataUrl, sftpListener, sftpUrl, webdavOnLan, webdavUrl, type MdnsResponder } from './lan';
import { RotatingLog } from './log-file';
import { DeviceKeyStore, machineId, pairWithSession, signIn, type Sealer } from './pairing';
import { PowerReporter, type PowerEvent } from './power';
import { SleepInhibitor } from './sleep-inhibitor';
import { publicSelfTest } from './public-selftest';
import { buildServerEnv, FirstRunMarker } from './server-env';
import { ServerHost } from './server-host';
import { pairPagePath, toMenuTemplate, trayIcon, trayMenu, trayTooltip } from './tray-menu';
import { createDesktopUpdater, type AutoUpdaterSurface } from './updater';
import { isExternalSafe, mainWindowOptions, navigationVerdict, panelWindowOptions, WindowStateStore } from './windows';
import {
  IPC,
  type Activity,
  type BackupStatus,
  type DesktopSettings,
  type ForkServer,
  type GovernorView,
  type OfflineStorage,
  type TrayCommand,
  type TrayState,
  type UplinkView,
} from './types';

/** The members of the `electron` module the shell uses. */
export type ElectronApi = Pick<
  typeof import('electron'),
  | 'app'
  | 'BrowserWindow'
  | 'clipboard'
  | 'ipcMain'
  | 'Menu'
  | 'nativeImage'
  | 'Notification'
  | 'powerMonitor'
  | 'powerSaveBlocker'
  | 'safeStorage'
  | 'screen'
  | 'session'
  | 'shell'
  | 'Tray'
>;

export interface ShellDeps {
  electron: ElectronApi;
  autoUpdater: AutoUpdaterSurface;
  /** A fresh mDNS responder each time LAN advertising starts. */
  mdns(): MdnsResponder;
  /** How the server is started, given the app's root (the utility process in the app). */
  fork(appRoot: string): ForkServer;
}

/** How long quitting waits for in-flight transfers before the server is stopped anyway. */
const QUIT_DRAIN_MS = 30_000;
/** Idleness has no powerMonitor event: it is polled this often. */
const IDLE_POLL_MS = 30_000;

/** Starts the shell once Electron is ready; resolves when the server is up (or failed to start) and the first window asked for. */
export async function startShell(deps: ShellDeps): Promise<void> {
  const {
    app,
    BrowserWindow: Window,
    clipboard,
    ipcMain,
    Menu,
    nativeImage,
    Notification,
    powerMonitor,
    powerSaveBlocker,
    safeStorage,
    screen,
    session,
    shell,
    Tray,
  } = deps.electron;
  await app.whenReady();
  const appRoot = app.getAppPath();
  const userData = app.getPath('userData');
  const resources = join(appRoot, 'resources');
  const preload = join(appRoot, 'dist/electron/preload.js');
  const settings = new SettingsStore(join(userData, 'desktop-settings.json'));
  const dataDir = () => settings.get().dataDir ?? join(userData, 'data');
  const logsDir = join(userData, 'logs');
  const log = new RotatingLog(join(logsDir, 'server.log'));
  const firstRun = new FirstRunMarker(userData, app.getPath('home'));
  const sealer: Sealer = safeStorage.isEncryptionAvailable()
    ? { seal: (s) => safeStorage.encryptString(s), unseal: (b) => safeStorage.decryptString(b) }
    : { seal: (s) => Buffer.from(s), unseal: (b) => b.toString() };
  const keys = new DeviceKeyStore(join(userData, 'device-key'), sealer);
  const thisMachine = machineId(join(userData, 'machine-id'));
  const label = `Filedock desktop on ${hostname()}`;

  const host = new ServerHost({
    fork: deps.fork(appRoot),
    env: () => buildServerEnv({ settings: settings.get(), dataDir: dataDir(), firstRun: firstRun.begin(), base: process.env }),
    drainTimeoutMs: QUIT_DRAIN_MS,
    log: (l) => log.write(l),
    pipeOutput: (c) => {
      if (c.stdout) log.pipe(c.stdout, '');
      if (c.stderr) log.pipe(c.stderr, '[stderr] ');
    },
  });

  let activity: Activity = { transfers: 0, ops: 0, syncing: false };
  let backup: BackupStatus | null = null;
  let offline: OfflineStorage[] = [];
  let governor: GovernorView | null = null;
  let uplink: UplinkView | null = null;
  // Held while the server asks (transfers, long ops); the update waits for the same word.
  const inhibitor = new SleepInhibitor(powerSaveBlocker, { onChange: () => render() });
  const updater = createDesktopUpdater({
    autoUpdater: deps.autoUpdater,
    beforeInstall: () => host.stop(),
    whenIdle: () => inhibitor.whenIdle(),
    log: (m) => log.write(`[updater] ${m}`),
  });

  const origin = () => `http://127.0.0.1:${host.snapshot().port}`;
  const currentLanUrl = () => {
    const s = host.snapshot();
    return s.status === 'running' && s.port ? lanUrl(settings.get().lanAccess, networkInterfaces(), s.port) : null;
  };
  const state = (): TrayState => ({
    server: host.snapshot(),
    settings: settings.get(),
    lanUrl: currentLanUrl(),
    webdavUrl: host.snapshot().status === 'running' ? webdavUrl(process.env, currentLanUrl(), host.snapshot().port) : null,
    sftpUrl: host.snapshot().status === 'running' ? sftpUrl(process.env, currentLanUrl()) : null,
    nfsUrl: host.snapshot().status === 'running' ? nfsUrl(process.env, currentLanUrl()) : null,
    activity,
    backup,
    offline,
    governor,
    uplink,
    paused: host.isPaused(),
    keepingAwake: inhibitor.holding,
    awakeReasons: inhibitor.reasons,
    update: { state: updater.state, version: updater.version, error: updater.error },
  });

  const tray = new Tray(nativeImage.createFromPath(join(resources, 'tray-idle.png')));
  function render(): void {
    const s = state();
    tray.setImage(nativeImage.createFromPath(join(resources, `tray-${trayIcon(s)}.png`)));
    tray.setToolTip(trayTooltip(s));
    tray.setContextMenu(Menu.buildFromTemplate(toMenuTemplate(trayMenu(s), (c) => void run(c))));
  }

  // mDNS follows the running server and the LAN setting.
  let stopAdvertising: (() => Promise<void>) | null = null;
  async function syncAdvertising(): Promise<void> {
    await stopAdvertising?.();
    stopAdvertising = null;
    const s = host.snapshot();
    if (s.status === 'running' && s.port && settings.get().lanAccess && settings.get().advertise) {
      const sftp = sftpListener(process.env);
      const nfs = nfsListener(process.env);
      stopAdvertising = advertise(deps.mdns(), {
        name: `Filedock on ${hostname()}`,
        port: s.port,
        version: app.getVersion(),
        webdav: webdavOnLan(process.env),
        sftpPort: sftp?.onLan ? sftp.port : undefined,
        nfsPort: nfs?.onLan ? nfs.port : undefined,
      });
    }
  }

  host.on('state', (s) => {
    if (s.status !== 'running') inhibitor.release();
    if (s.status === 'running' || s.status === 'stopped' || s.status === 'error') void syncAdvertising();
    render();
  });
  host.on('activity', (a) => {
    activity = a;
    render();
  });
  host.on('inhibit', (m) => inhibitor.update(m));
  host.on('backup', (b) => {
    backup = b;
    render();
  });
  host.on('storages', (o) => {
    offline = o;
    render();
  });
  host.on('governor', (g) => {
    governor = g;
    render();
  });
  host.on('uplink', (u) => {
    uplink = u;
    render();
  });
  // Battery, presence and sleep go to the server's governor of background work.
  const reporter = new PowerReporter(powerMonitor, (m) => host.setPower(m));
  // The cast: powerMonitor's overloads take one event name at a time.
  for (const e of ['on-battery', 'on-ac', 'suspend', 'resume', 'lock-screen', 'unlock-screen'] as const satisfies readonly PowerEvent[])
    powerMonitor.on(e as 'suspend', () => reporter.handle(e));
  setInterval(() => reporter.handle('poll'), IDLE_POLL_MS).unref();
  reporter.report();
  host.on('notify', (n) => new Notification({ title: n.title, body: n.body }).show());
  updater.on('change', () => {
    if (updater.state === 'available') new Notification({ title: 'Filedock update available', body: `Version ${updater.version} is being downloaded.` }).show();
    render();
  });

  // The window.
  const windowState = new WindowStateStore(join(userData, 'window-state.json'));
  let win: BrowserWindow | null = null;
  /** Shows the window at `path` (the app's home by default), opening and signing it in first when needed. */
  async function openWindow(path = '/'): Promise<void> {
    if (win) {
      if (path !== '/') await win.loadURL(`${origin()}${path}`);
      return win.show();
    }
    const w = new Window(mainWindowOptions(preload, windowState.load(screen.getAllDisplays().map((d) => d.workArea)), join(resources, 'icon.png')));
    win = w;
    guard(w, () => origin());
    const saveBounds = () => windowState.save({ ...w.getNormalBounds(), maximized: w.isMaximized() });
    w.on('close', saveBounds);
    w.on('session-end', () => void quit());
    w.on('closed', () => (win = null));
    w.once('ready-to-show', () => {
      if (windowState.load([]).maximized) w.maximize();
      w.show();
    });
    await signInWindow(w, path);
  }

  async function signInWindow(w: BrowserWindow, path: string): Promise<void> {
    const first = firstRun.begin();
    const out = await signIn({ baseUrl: origin(), machineId: thisMachine, label, keys, bootstrapSecret: first?.secret ?? null }).catch((e: Error) => {
      log.write(`[desktop] sign-in failed: ${e.message}`);
      return { via: 'none' as const, reason: e.message };
    });
    if (out.via !== 'none') {
      await w.webContents.session.cookies.set({
        url: origin(),
        name: 'service_session',
        value: out.login.token,
        httpOnly: true,
        sameSite: 'lax',
        expirationDate: Date.parse(out.login.expires_at) / 1000,
      });
      if (out.via === 'bootstrap') firstRun.finish();
    } else log.write(`[desktop] window opens the sign-in page: ${out.reason}`);
    await w.loadURL(`${origin()}${path}`);
  }

  // A password sign-in in the window (after a revoke) pairs this machine again.
  session.defaultSession.cookies.on('changed', (_e, cookie, _cause, removed) => {
    if (removed || cookie.name !== 'service_session' || keys.load()) return;
    pairWithSession(origin(), cookie.value, { machineId: thisMachine, label, keys }).catch((e: Error) => log.write(`[desktop] pairing failed: ${e.message}`));
  });

  function guard(w: BrowserWindow, allowedOrigin: () => string | null): void {
    const decide = (url: string) => {
      const o = allowedOrigin();
      const verdict = o ? navigationVerdict(url, o) : 'deny';
      if (verdict === 'external') void shell.openExternal(url);
      return verdict;
    };
    w.webContents.on('will-navigate', (e, url) => {
      if (decide(url) !== 'allow') e.preventDefault();
    });
    w.webContents.on('will-redirect', (e, url) => {
      if (decide(url) !== 'allow') e.preventDefault();
    });
    w.webContents.setWindowOpenHandler(({ url }) => (decide(url), { action: 'deny' }));
    w.webContents.on('will-attach-webview', (e) => e.preventDefault());
  }

  async function openPanel(title: string, width: number, height: number, load: (w: BrowserWindow) => Promise<void>, withBridge = false): Promise<void> {
    const w = new Window(panelWindowOptions(title, width, height, withBridge ? preload : undefined));
    guard(w, () => null);
    w.setMenu(null);
    await load(w);
  }

  // IPC for the bridge: only pages of the server origin and our own panel may call.
  const panelUrl = () => pathToFileURL(join(resources, 'public-links.html')).href;
  const trusted = (e: IpcMainEvent | IpcMainInvokeEvent) => {
    const url = e.senderFrame?.url ?? '';
    return url === panelUrl() || (host.snapshot().port !== undefined && navigationVerdict(url, origin()) === 'allow');
  };
  const handle = (channel: string, fn: (...args: never[]) => unknown) =>
    ipcMain.handle(channel, (e, ...args) => {
      if (!trusted(e)) throw new Error('not allowed');
      return (fn as (...a: unknown[]) => unknown)(...args);
    });
  ipcMain.on(IPC.appVersion, (e) => (e.returnValue = trusted(e) ? app.getVersion() : ''));
  handle(IPC.openExternal, (url: string) => (isExternalSafe(url) ? shell.openExternal(url) : Promise.reject(new Error('refused'))));
  handle(IPC.getSettings, () => settings.get());
  handle(IPC.updateSettings, (patch: Partial<DesktopSettings>) => applySettings(patch));
  handle(IPC.publicSelfTest, () => {
    const s = settings.get();
    if (!s.publicUrl) throw new Error('set the public URL first');
    return publicSelfTest({ publicUrl: s.publicUrl, localPublicUrl: `http://127.0.0.1:${s.publicPort}` });
  });

  /** Saves settings and applies them: login item at once, server-facing ones by a drained restart. */
  async function applySettings(patch: Partial<DesktopSettings>): Promise<DesktopSettings> {
    const before = settings.get();
    const after = settings.update(patch);
    app.setLoginItemSettings({ openAtLogin: after.startAtLogin });
    const restartKeys: (keyof DesktopSettings)[] = ['port', 'lanAccess', 'dataDir', 'publicUrl', 'publicPort'];
    if (restartKeys.some((k) => before[k] !== after[k])) await host.restart().catch((e: Error) => log.write(`[desktop] restart failed: ${e.message}`));
    else await syncAdvertising();
    render();
    return after;
  }

  const commands: Record<TrayCommand, () => unknown> = {
    'open-window': () => openWindow(),
    'open-browser': () => shell.openExternal(`${origin()}/`),
    'copy-lan-url': () => clipboard.writeText(currentLanUrl() ?? ''),
    'copy-webdav-url': () => clipboard.writeText(webdavUrl(process.env, currentLanUrl(), host.snapshot().port) ?? ''),
    'copy-sftp-url': () => clipboard.writeText(sftpUrl(process.env, currentLanUrl()) ?? ''),
    'copy-nfs-url': () => clipboard.writeText(nfsUrl(process.env, currentLanUrl()) ?? ''),
    'copy-public-url': () => clipboard.writeText(settings.get().publicUrl),
    'show-qr': async () => {
      const url = currentLanUrl();
      if (!url) return;
      const img = await qrDataUrl(url);
      const html = `<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'"><body style="font:14px system-ui;text-align:center;margin:16px"><img src="${img}" width="240" height="240" alt=""><p>${url}</p></body>`;
      await openPanel('Open Filedock on your phone', 300, 360, (w) => w.loadURL(`data:text/html;charset=utf-8,${encodeURIComponent(html)}`));
    },
    'pair-phone': () => {
      const url = currentLanUrl();
      return url ? openWindow(pairPagePath(url)) : undefined;
    },
    'public-links': () => openPanel('Public links', 520, 560, (w) => w.loadFile(join(resources, 'public-links.html')), true),
    'toggle-pause': () => (host.setPaused(!host.isPaused()), render()),
    'toggle-start-at-login': () => applySettings({ startAtLogin: !settings.get().startAtLogin }),
    'toggle-lan-access': () => applySettings({ lanAccess: !settings.get().lanAccess }),
    'check-updates': () => updater.check(),
    'install-update': () => updater.install(),
    'restart-server': () => host.start().catch(() => undefined),
    'open-data-folder': () => shell.openPath(dataDir()),
    'open-logs': () => shell.openPath(logsDir),
    quit: () => quit(),
  };
  async function run(c: TrayCommand): Promise<void> {
    try {
      await commands[c]();
    } catch (e) {
      log.write(`[desktop] ${c} failed: ${(e as Error).message}`);
    }
  }

  // Quit, logout and OS shutdown all drain the server (bounded) before the app exits.
  let quitting: Promise<void> | null = null;
  function quit(): Promise<void> {
    return (quitting ??= (async () => {
      inhibitor.release();
      await stopAdvertising?.();
      await host.stop(QUIT_DRAIN_MS);
      log.close();
      app.exit(0);
    })());
  }
  app.on('before-quit', (e) => {
    e.preventDefault();
    void quit();
  });
  powerMonitor.on('shutdown', (...args: unknown[]) => {
    (args[0] as { preventDefault?: () => void } | undefined)?.preventDefault?.();
    void quit();
  });
  app.on('second-instance', () => void openWindow());
  // A tray app keeps running with no window open.
  app.on('window-all-closed', () => undefined);

  render();
  try {
    await host.start();
    if (firstRun.begin()) await openWindow();
  } catch (e) {
    log.write(`[desktop] server did not start: ${(e as Error).message}`);
  }
}
