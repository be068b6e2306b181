/**
 * The environment the shell starts the server with: desktop settings become
 * `SERVICE_*` variables, and the first run adds the bootstrap secret and the
 * default local storage (docs/server-host-protocol.md). First run is decided
 * by a marker file, so a later launch never hands out a bootstrap secret
 * again (a revoked device key must not be able to sign back in that way).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DesktopSettings } from './types';

export interface FirstRun {
  /** One-time secret for `POST /api/auth/desktop/bootstrap`. */
  secret: string;
  /** Folder of the default local storage (created before the server starts). */
  storagePath: string;
}

export interface EnvInput {
  settings: DesktopSettings;
  /** Resolved data folder (settings.dataDir or the default under userData). */
  dataDir: string;
  firstRun: FirstRun | null;
  /** The shell's own environment; user-set SERVICE_* values pass through unless the shell manages them. */
  base: NodeJS.ProcessEnv;
}

/** The complete environment of one server start. */
export function buildServerEnv({ settings, dataDir, firstRun, base }: EnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  Object.assign(env, {
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: String(settings.port),
    SERVICE_HOST: settings.lanAccess ? '0.0.0.0' : '127.0.0.1',
    SERVICE_INSTALL_MODE: 'desktop',
    // The desktop app updates itself through electron-updater, not the server's self-update.
    SERVICE_UPDATE_CHECK: '0',
  });
  if (settings.publicUrl) {
    env.SERVICE_PUBLIC_URL = settings.publicUrl;
    env.SERVICE_PUBLIC_LISTEN = `127.0.0.1:${settings.publicPort}`;
  } else {
    delete env.SERVICE_PUBLIC_URL;
    delete env.SERVICE_PUBLIC_LISTEN;
  }
  delete env.SERVICE_DESKTOP_BOOTSTRAP;
  if (firstRun) {
    env.SERVICE_DESKTOP_BOOTSTRAP = firstRun.secret;
    env.SERVICE_DEFAULT_STORAGE_DRIVER = 'local';
    env.SERVICE_DEFAULT_STORAGE_NAME = 'Filedock';
    env.SERVICE_DEFAULT_STORAGE_PATH = firstRun.storagePath;
  }
  return env;
}

/**
 * First-run bookkeeping in the shell's user-data folder. `begin` returns the
 * first-run inputs (a fresh secret, `~/Filedock` created) until `finish` is
 * called after the window was signed in and paired; then null forever.
 */
export class FirstRunMarker {
  private secret: string | null = null;

  constructor(
    private readonly userData: string,
    private readonly home: string,
  ) {}

  private get marker(): string {
    return join(this.userData, 'first-run-done');
  }

  /** The first-run inputs, or null when the first run already completed. Same secret for the life of this object. */
  begin(): FirstRun | null {
    if (existsSync(this.marker)) return null;
    this.secret ??= randomBytes(32).toString('base64url');
    const storagePath = join(this.home, 'Filedock');
    mkdirSync(storagePath, { recursive: true });
    return { secret: this.secret, storagePath };
  }

  /** Records that the first run completed (the owner is paired). Idempotent. */
  finish(): void {
    mkdirSync(this.userData, { recursive: true });
    writeFileSync(this.marker, new Date().toISOString());
    this.secret = null;
  }
}
