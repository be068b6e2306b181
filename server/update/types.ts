/**
 * The updater's public shapes: what the composition root passes in, and what
 * the admin routes and the CLI get back (snake_case, as the API presents it).
 */
import type { InstallMode, ReleaseSummary, UpdateStatus } from '../contract';
import type { UpdatePolicy } from './policy';
import type { UpdaterPort } from './port';

export type { InstallMode, ReleaseSummary, UpdateStatus };

/** Event payloads, as `server/events/types.ts` declares them. */
export interface UpdateEvents {
  update_available: { version: string; severity: string; notes?: string; notes_url?: string; kind: string };
  update_applied: { from: string; to: string; restart_required: boolean };
}

export interface UpdateLog {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface UpdaterOptions {
  /** The running version (`x.y.z`). */
  version: string;
  dataDir: string;
  /** `SERVICE_UPDATE_CHECK`: false means no outbound request, ever. */
  check: boolean;
  channel: string;
  /** Empty means no manifest is configured: checks are off as with `check: false`. */
  manifestUrl: string;
  /** Check cadence; raised to at least one hour. */
  intervalMs: number;
  policy: UpdatePolicy;
  /** `SERVICE_UPDATE_WINDOW`, e.g. `03:00-05:00`; empty or absent means any time. */
  window?: string;
  /** `SERVICE_UPDATE_PRE_COMMAND`: replaces the database snapshot; a non-zero exit aborts. */
  preCommand?: string;
  installMode: InstallMode;
  /** The bundle directory being replaced (`binary` installs); see `bundleRootOf`. */
  installRoot?: string;
  /** `process.platform` / `process.arch` names, as in the manifest's assets. */
  os: string;
  arch: string;
  /** Writes a consistent copy of the database beside `base`, a path without an extension (`Db.snapshot`). */
  snapshotDb(base: string): Promise<unknown>;
  /** True while long ops run (copies, extractions, ZIP builds, backup copies): an automatic upgrade waits for the next tick. */
  busy?(): boolean;
  emit<E extends keyof UpdateEvents>(event: E, payload: UpdateEvents[E]): void;
  log: UpdateLog;
  /** Restarts through the supervisor (desktop shell, systemd) after a swap; absent means "restart required". */
  restart?: () => void;
  /** Replaces the bundle port, e.g. the desktop shell's electron-updater port. */
  port?: UpdaterPort;
  /** Clock for the update window (tests). */
  now?: () => Date;
}

export interface UpdateResult {
  from: string;
  to: string;
  restart_required: boolean;
  status: UpdateStatus;
}

export interface Updater {
  /** The cached status; never touches the network. */
  status(): UpdateStatus;
  /**
   * Fetches the manifest once (unless checks are off: then it only returns the
   * status) and announces a newly seen release. Never throws: a failed or
   * broken manifest is recorded as `last_error`.
   */
  check(): Promise<UpdateStatus>;
  /**
   * Installs `version` (default: the candidate). Throws
   * `AppError('update_refused', {reason})`: `container` (HTTP 409), and every
   * other refusal or failure, with the running install intact.
   */
  apply(version?: string): Promise<UpdateResult>;
  /** Schedules periodic checks and automatic upgrades per policy. Idempotent. */
  start(): void;
  /** Cancels the schedule; an upgrade already running finishes. */
  stop(): void;
}
