/**
 * Types shared by the desktop shell's pure modules and its thin Electron
 * wiring. Nothing here imports `electron` at runtime: the pure modules receive
 * the few Electron calls they need through the small surfaces below, so plain
 * Node tests can drive them (docs/desktop.md).
 */

import type { GovernorHostMessage, HostMessage, InhibitReason, PowerHostMessage, ServerMessage, UplinkHostMessage } from '../server/contract';

/** The server↔host protocol (docs/server-host-protocol.md) is declared once, in the server's contract. */
export type { HostMessage, InhibitReason, ServerMessage, PowerHostMessage };

/** The server's background governor as the tray shows it (host message `governor`). */
export type GovernorView = Omit<GovernorHostMessage, 'type'>;

/**
 * One running server process, whatever started it (Electron's
 * `utilityProcess.fork` or Node's `child_process.fork`).
 */
export interface ServerChild {
  readonly pid: number | undefined;
  /** Piped output; null when the fork did not pipe it. */
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  /** Sends a message; silently dropped once the process has gone. */
  send(message: HostMessage): void;
  /** Called for every well-formed message from the server. */
  onMessage(listener: (message: ServerMessage) => void): void;
  /** Called exactly once when the process has exited (code null when killed by a signal). */
  onExit(listener: (code: number | null) => void): void;
  /** Kills the process at once (SIGKILL); no drain. Idempotent. */
  kill(): void;
}

/** Starts one server process with exactly `env` as its environment. */
export type ForkServer = (env: Record<string, string>) => ServerChild;

export type ServerStatus = 'stopped' | 'starting' | 'running' | 'backoff' | 'error' | 'stopping';

/** What the supervisor knows right now; the tray renders it. */
export interface ServerSnapshot {
  status: ServerStatus;
  port?: number;
  url?: string;
  pid?: number;
  /** Why the server is in `error` (breaker tripped, fatal start-up error). */
  error?: string;
  /** Delay before the next restart while in `backoff`. */
  restartInMs?: number;
  /** Crashes counted in the breaker's window. */
  recentCrashes: number;
}

export interface Activity {
  transfers: number;
  ops: number;
  syncing: boolean;
}

/** The server's backup status (host message `replica`), for the tray's "Backups" line. */
export interface BackupStatus {
  /** Any storage backed up to an enabled target; "No backups set up" otherwise. */
  linked: boolean;
  /** Recovery point: age in seconds of the oldest change not yet on its backup. */
  rpoS: number;
  /** Above the server's threshold (SERVICE_REPLICA_RPO_WARN): amber. */
  warn: boolean;
  unresolved: number;
}

/** Public-link egress and request budgets as the tray shows them (host message `uplink`). */
export type UplinkView = Omit<UplinkHostMessage, 'type'>;

/** A storage the server reports offline (host message `storages`), for the tray's offline lines. */
export interface OfflineStorage {
  name: string;
  reason: string | null;
  /** Its removable drive is not mounted. */
  unplugged: boolean;
  /** Another drive sits where its drive was: not attached. */
  foreign: boolean;
}

/** States of the desktop updater written under `electron/updater/`. */
export type UpdateState = 'idle' | 'checking' | 'available' | 'not-available' | 'downloading' | 'downloaded' | 'waiting' | 'installing' | 'error';

/**
 * The updater port the shell consumes; `electron/updater/` implements it with
 * electron-updater. The shell only reads state and asks for a check or install.
 */
export interface DesktopUpdater {
  readonly state: UpdateState;
  readonly version?: string;
  readonly error?: string;
  /** Starts a check; resolves when it settled (state tells the outcome). Never rejects. */
  check(): Promise<void>;
  /** Quits and installs a `downloaded` update; a no-op in any other state. */
  install(): void;
  on(event: 'change', listener: () => void): unknown;
}

/** The user's desktop settings (current version of the settings file). */
export interface DesktopSettings {
  /** Fixed HTTP port; 0 lets the OS pick one at each start. */
  port: number;
  /** true binds all interfaces (phones on the LAN can connect); false keeps the server on loopback. */
  lanAccess: boolean;
  startAtLogin: boolean;
  /** Server data folder; null means `<userData>/data`. */
  dataDir: string | null;
  /** The address a tunnel gives the public listener; empty when unused. */
  publicUrl: string;
  /** Loopback port of the public-links-only listener the tunnel points at (used when `publicUrl` is set). */
  publicPort: number;
  /** Whether LAN clients may discover the service over mDNS/DNS-SD. */
  advertise: boolean;
}

/** Everything the tray shows; `tray-menu.ts` turns it into a menu. */
export interface TrayState {
  server: ServerSnapshot;
  settings: Pick<DesktopSettings, 'lanAccess' | 'startAtLogin' | 'publicUrl'>;
  lanUrl: string | null;
  /** The WebDAV address to copy (`lan.ts` webdavUrl), or null/absent when WebDAV is off. */
  webdavUrl?: string | null;
  /** The SFTP gateway's address to copy (`lan.ts` sftpUrl), or null/absent when the gateway is off. */
  sftpUrl?: string | null;
  /** The NFS gateway's address to copy (`lan.ts` nfsUrl), or null/absent when the gateway is off. */
  nfsUrl?: string | null;
  activity: Activity;
  /** The last backup status the server sent; null/absent before the first (or when it is not running). */
  backup?: BackupStatus | null;
  /** Storages offline now (unplugged drives, unreachable backends); absent or empty when none. */
  offline?: OfflineStorage[];
  /** The server's background governor (lanes, CPU, pauses); null/absent before its first report. */
  governor?: GovernorView | null;
  /** Public-link egress and the request budgets of metered storages; null/absent before the first report. */
  uplink?: UplinkView | null;
  paused: boolean;
  /** True while the OS sleep inhibitor is held (sleep-inhibitor.ts). */
  keepingAwake: boolean;
  /** What the server said keeps it busy (shown while the inhibitor is held). */
  awakeReasons?: InhibitReason[];
  update: { state: UpdateState; version?: string; error?: string };
}

/** Commands a tray click dispatches; `main.ts` maps each one to its handler. */
export type TrayCommand =
  | 'open-window'
  | 'open-browser'
  | 'copy-lan-url'
  | 'copy-webdav-url'
  | 'copy-sftp-url'
  | 'copy-nfs-url'
  | 'copy-public-url'
  | 'show-qr'
  | 'pair-phone'
  | 'toggle-pause'
  | 'toggle-start-at-login'
  | 'toggle-lan-access'
  | 'public-links'
  | 'check-updates'
  | 'install-update'
  | 'restart-server'
  | 'open-data-folder'
  | 'open-logs'
  | 'quit';

/** A menu entry without Electron types; `main.ts` adds the click handlers. */
export type TrayEntry =
  | { kind: 'label'; label: string }
  | { kind: 'separator' }
  | { kind: 'command'; command: TrayCommand; label: string; enabled: boolean }
  | { kind: 'toggle'; command: TrayCommand; label: string; enabled: boolean; checked: boolean };

/** What the preload bridge exposes to pages of the server origin as `window.filedockDesktop`. */
export interface DesktopBridge {
  appVersion: string;
  /** Opens an http(s) or mailto URL in the default browser; other schemes are refused. */
  openExternal(url: string): Promise<void>;
  getSettings(): Promise<DesktopSettings>;
  /** Applies a partial change; resolves with the saved settings. Rejects on an invalid value. */
  updateSettings(patch: Partial<DesktopSettings>): Promise<DesktopSettings>;
  /** Runs the public-link self-test against the saved public URL. */
  runPublicSelfTest(): Promise<SelfTestReport>;
}

/** IPC channel names between preload and main. */
export const IPC = {
  openExternal: 'desktop:open-external',
  getSettings: 'desktop:get-settings',
  updateSettings: 'desktop:update-settings',
  publicSelfTest: 'desktop:public-self-test',
  appVersion: 'desktop:app-version',
} as const;

export interface SelfTestCheck {
  id: 'share-route' | 'admin-refused' | 'login-refused' | 'clock-skew' | 'body-limit';
  ok: boolean;
  detail: string;
}

export interface SelfTestReport {
  url: string;
  ok: boolean;
  checks: SelfTestCheck[];
}
