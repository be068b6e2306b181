/**
 * The seam between deciding to upgrade and doing it. The headless server puts
 * a new bundle in place (`bundle-port.ts`); the desktop shell hands the same
 * call to electron-updater (`electron/updater/`). Both keep the running
 * install intact until the point of no return, and call `beforeSwap` (the
 * database snapshot) right before it.
 */
import type { InstallPhase } from '../contract';
import type { Asset } from './manifest';

export type { InstallPhase };

export interface InstallTarget {
  from: string;
  version: string;
  /** The manifest's asset for this OS/CPU; null for ports that fetch from their own feed. */
  asset: Asset | null;
}

export interface InstallContext {
  /** Takes the database snapshot; a rejection aborts the install with the old build in place. */
  beforeSwap(): Promise<void>;
  /** Progress for the status (`in_progress`). */
  onPhase(phase: InstallPhase): void;
}

export interface InstallOutcome {
  /** True when nothing restarts the service by itself: the operator must. */
  restartRequired: boolean;
}

export interface UpdaterPort {
  /** Whether this port needs the manifest's asset for our OS/CPU (the desktop feed brings its own). */
  readonly needsAsset: boolean;
  /**
   * Installs `target`. Resolves once the new build is in place (and a restart
   * was requested or is reported as required). Throws
   * `AppError('update_refused', {reason})` on any failure, with the running
   * install untouched. Not reentrant: the caller serialises calls.
   */
  install(target: InstallTarget, ctx: InstallContext): Promise<InstallOutcome>;
}
