/**
 * The desktop app's updater: electron-updater on a generic feed, driven as an
 * explicit state machine the tray renders. It also exposes the install path
 * as the same port shape the server's apply path uses (server/update/port.ts),
 * so an apply started from the admin page and one started from the tray run
 * the same steps: download and verify (electron-updater checks the feed's
 * sha512), snapshot, then quit and install.
 */
import { EventEmitter } from 'node:events';
import type { DesktopUpdater, UpdateState } from '../types';

type UpdaterEvent = 'checking-for-update' | 'update-not-available' | 'update-available' | 'update-downloaded' | 'download-progress' | 'error';
/** What the events carry that we read: an UpdateInfo's `version`, an Error's `message`. */
type UpdaterEventArg = { version?: string; message?: string } | undefined;

/** The few members of electron-updater's `autoUpdater` we use; plain Node tests pass a fake. */
export interface AutoUpdaterSurface {
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  setFeedURL(options: { provider: 'generic'; url: string; channel?: string | null }): void;
  checkForUpdates(): Promise<unknown>;
  downloadUpdate(): Promise<unknown>;
  quitAndInstall(isSilent?: boolean, isForceRunAfter?: boolean): void;
  on(event: UpdaterEvent, listener: (info: UpdaterEventArg) => void): unknown;
}

/**
 * The server's `UpdaterPort` shape (server/update/port.ts), restated because
 * the shell may import only `server/contract`; the test checks both stay
 * assignable to each other.
 */
export interface DesktopInstallPort {
  readonly needsAsset: false;
  install(
    target: { from: string; version: string },
    ctx: { beforeSwap(): Promise<void>; onPhase(phase: 'downloading' | 'snapshot' | 'restarting'): void },
  ): Promise<{ restartRequired: boolean }>;
}

export interface DesktopUpdaterOptions {
  autoUpdater: AutoUpdaterSurface;
  /** Generic feed (electron-builder's `latest*.yml` + installers); absent keeps the app-update.yml baked in at build time. */
  feedUrl?: string;
  channel?: string;
  /** Runs before a tray-started quit-and-install (the admin path runs its own snapshot): snapshot the server's database. A rejection cancels the install. */
  beforeInstall(): Promise<void>;
  /**
   * Resolves when no transfer or long op runs (the sleep inhibitor's `whenIdle`): every install, from the tray or the
   * admin page, waits on it in state `waiting`, so an update never cuts a copy or a download. Absent: installs at once.
   */
  whenIdle?(): Promise<void>;
  log(message: string): void;
}

export interface DesktopUpdaterHandle extends DesktopUpdater {
  readonly port: DesktopInstallPort;
}

/** Which state each electron-updater event moves to; anything else keeps the state. */
const TRANSITIONS: Record<UpdaterEvent, UpdateState> = {
  'checking-for-update': 'checking',
  'update-available': 'available',
  'update-not-available': 'not-available',
  'download-progress': 'downloading',
  'update-downloaded': 'downloaded',
  error: 'error',
};
/** States in which a check would disturb a download or an install. */
const BUSY: UpdateState[] = ['downloading', 'downloaded', 'waiting', 'installing'];

/** Wires electron-updater once; the returned object is the tray's updater and the admin apply port. */
export function createDesktopUpdater(opts: DesktopUpdaterOptions): DesktopUpdaterHandle {
  const au = opts.autoUpdater;
  const events = new EventEmitter();
  let state: UpdateState = 'idle';
  let version: string | undefined;
  let error: string | undefined;
  let downloadedVersion: string | undefined;

  // We start the download ourselves after `update-available` so the state says why bytes are moving.
  au.autoDownload = false;
  // An update installs when the user says so (tray or admin page), never behind their back at quit.
  au.autoInstallOnAppQuit = false;
  if (opts.feedUrl) au.setFeedURL({ provider: 'generic', url: opts.feedUrl, channel: opts.channel ?? null });

  const set = (next: UpdateState, info?: { version?: string; error?: string }) => {
    // download-progress repeats; the tray only needs to hear about real changes.
    if (next === state && next !== 'error' && (!info?.version || info.version === version)) return;
    state = next;
    if (info?.version) version = info.version;
    error = next === 'error' ? info?.error : undefined;
    events.emit('change');
  };

  for (const [event, next] of Object.entries(TRANSITIONS) as Array<[UpdaterEvent, UpdateState]>)
    au.on(event, (arg) => {
      if (state === 'installing' || state === 'waiting') return;
      if (event === 'error') return set('error', { error: arg?.message ?? String(arg) });
      if (event === 'update-downloaded') downloadedVersion = arg?.version;
      set(next, { version: arg?.version });
      if (event === 'update-available') au.downloadUpdate().catch((e: Error) => set('error', { error: `download failed: ${e.message}` }));
    });

  const check = async (): Promise<void> => {
    if (BUSY.includes(state)) return;
    try {
      set('checking');
      await au.checkForUpdates();
    } catch (e) {
      set('error', { error: (e as Error).message });
    }
  };

  /** Resolves when the state leaves `from` states; rejects on `error`. */
  const settle = (until: UpdateState[]): Promise<void> =>
    new Promise((resolve, reject) => {
      const look = () => {
        if (state === 'error') return done(() => reject(new Error(error ?? 'update failed')));
        if (until.includes(state)) return done(resolve);
      };
      const done = (f: () => void) => {
        events.off('change', look);
        f();
      };
      events.on('change', look);
      look();
    });

  const quitAndInstall = async (before: () => Promise<void>): Promise<void> => {
    if (opts.whenIdle) {
      set('waiting');
      await opts.whenIdle();
    }
    set('installing');
    try {
      await before();
    } catch (e) {
      set('downloaded');
      throw e;
    }
    opts.log(`installing desktop update ${downloadedVersion}`);
    au.quitAndInstall(false, true);
  };

  const port: DesktopInstallPort = {
    needsAsset: false,
    async install(target, ctx) {
      ctx.onPhase('downloading');
      if (downloadedVersion !== target.version) {
        await check();
        await settle(['downloaded', 'not-available']);
      }
      if (downloadedVersion !== target.version)
        throw Object.assign(new Error(`the desktop feed offers ${downloadedVersion ?? 'no update'}, not ${target.version}`), { reason: 'unknown_version' });
      ctx.onPhase('snapshot');
      await quitAndInstall(async () => {
        await ctx.beforeSwap();
        ctx.onPhase('restarting');
      });
      return { restartRequired: false };
    },
  };

  return {
    get state() {
      return state;
    },
    get version() {
      return version;
    },
    get error() {
      return error;
    },
    check,
    install() {
      if (state !== 'downloaded') return;
      quitAndInstall(opts.beforeInstall).catch((e: Error) => {
        opts.log(`desktop update not installed: ${e.message}`);
        set('error', { error: e.message });
      });
    },
    on(event: 'change', listener: () => void) {
      return events.on(event, listener);
    },
    port,
  };
}
