/**
 * The desktop settings file (`<userData>/desktop-settings.json`): a versioned
 * JSON document upgraded step by step through `MIGRATIONS` and written
 * atomically (temp file + rename), so a crash mid-write never loses it.
 *
 * File versions:
 *   v1 `{version, port, lan}`
 *   v2 renames `lan` to `lanAccess`, adds `startAtLogin`
 *   v3 adds `dataDir` (null = default), `publicUrl`, `publicPort`, `advertise`
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DesktopSettings } from './types';

export const SETTINGS_VERSION = 3;

export const DEFAULT_SETTINGS: Readonly<DesktopSettings> = Object.freeze({
  port: 5212,
  lanAccess: true,
  startAtLogin: false,
  dataDir: null,
  publicUrl: '',
  publicPort: 5213,
  advertise: true,
});

type Doc = Record<string, unknown> & { version: number };

/** `MIGRATIONS[n]` turns a version-n document into version n+1. Never edit a shipped step; add one. */
const MIGRATIONS: Record<number, (d: Doc) => Doc> = {
  1: ({ lan, ...rest }) => ({ ...rest, version: 2, lanAccess: lan ?? DEFAULT_SETTINGS.lanAccess, startAtLogin: false }),
  2: (d) => ({ ...d, version: 3, dataDir: null, publicUrl: '', publicPort: 5213, advertise: true }),
};

export class SettingsError extends Error {
  constructor(
    readonly field: keyof DesktopSettings,
    reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/** Checks one complete settings object; throws SettingsError naming the first bad field. */
export function validateSettings(s: DesktopSettings): DesktopSettings {
  if (!Number.isInteger(s.port) || s.port < 0 || s.port > 65535) throw new SettingsError('port', 'must be an integer from 0 to 65535');
  if (!Number.isInteger(s.publicPort) || s.publicPort < 1 || s.publicPort > 65535) throw new SettingsError('publicPort', 'must be an integer from 1 to 65535');
  for (const k of ['lanAccess', 'startAtLogin', 'advertise'] as const) if (typeof s[k] !== 'boolean') throw new SettingsError(k, 'must be true or false');
  if (s.dataDir !== null && (typeof s.dataDir !== 'string' || s.dataDir.trim() === '')) throw new SettingsError('dataDir', 'must be a folder path or null');
  if (typeof s.publicUrl !== 'string') throw new SettingsError('publicUrl', 'must be a URL or empty');
  if (s.publicUrl !== '') {
    let u: URL;
    try {
      u = new URL(s.publicUrl);
    } catch {
      throw new SettingsError('publicUrl', 'must be an http(s) URL');
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new SettingsError('publicUrl', 'must be an http(s) URL');
  }
  return { ...s, publicUrl: s.publicUrl.replace(/\/+$/, '') };
}

/** The fields this version knows, over the defaults (unknown keys of a newer file are dropped). */
const withKnownFields = (fields: Record<string, unknown>): DesktopSettings =>
  ({
    ...DEFAULT_SETTINGS,
    ...Object.fromEntries(
      Object.keys(DEFAULT_SETTINGS)
        .filter((k) => k in fields)
        .map((k) => [k, fields[k]]),
    ),
  }) as DesktopSettings;

/** Upgrades a parsed document of any known version to the current shape; throws on an unknown or future version. */
export function migrate(raw: unknown): DesktopSettings {
  if (!raw || typeof raw !== 'object' || !Number.isInteger((raw as Doc).version)) throw new Error('not a settings document');
  let doc = raw as Doc;
  if (doc.version > SETTINGS_VERSION) throw new Error(`settings version ${doc.version} is newer than this app (${SETTINGS_VERSION})`);
  while (doc.version < SETTINGS_VERSION) {
    const step = MIGRATIONS[doc.version];
    if (!step) throw new Error(`no migration from settings version ${doc.version}`);
    doc = step(doc);
  }
  return validateSettings(withKnownFields(doc));
}

/**
 * Loads, upgrades and saves the settings file. A missing file gives the
 * defaults; an unreadable or invalid one is kept aside as `<file>.bad` and
 * replaced by the defaults; a file from a newer app is used read-only (its
 * known fields) and never overwritten, so a downgrade cannot destroy it.
 */
export class SettingsStore {
  private current: DesktopSettings;
  /** True when the file came from a newer app version; `update` then refuses to write. */
  readonly readOnly: boolean;

  constructor(readonly path: string) {
    const { settings, readOnly } = this.load();
    this.current = settings;
    this.readOnly = readOnly;
  }

  /** The current settings (a copy). */
  get(): DesktopSettings {
    return { ...this.current };
  }

  /** Validates and saves a partial change; throws SettingsError on a bad field, nothing is written then. */
  update(patch: Partial<DesktopSettings>): DesktopSettings {
    if (this.readOnly) throw new Error('the settings file belongs to a newer version of Filedock');
    const next = validateSettings(withKnownFields({ ...this.current, ...patch }));
    this.write(next);
    this.current = next;
    return this.get();
  }

  private load(): { settings: DesktopSettings; readOnly: boolean } {
    if (!existsSync(this.path)) return { settings: { ...DEFAULT_SETTINGS }, readOnly: false };
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.path, 'utf8'));
    } catch {
      return this.setAside();
    }
    const version = (raw as Doc | null)?.version;
    if (typeof version === 'number' && version > SETTINGS_VERSION) {
      try {
        return { settings: validateSettings(withKnownFields(raw as Doc)), readOnly: true };
      } catch {
        return { settings: { ...DEFAULT_SETTINGS }, readOnly: true };
      }
    }
    let settings: DesktopSettings;
    try {
      settings = migrate(raw);
    } catch {
      return this.setAside();
    }
    if (version !== SETTINGS_VERSION) this.write(settings);
    return { settings, readOnly: false };
  }

  private setAside(): { settings: DesktopSettings; readOnly: boolean } {
    renameSync(this.path, `${this.path}.bad`);
    return { settings: { ...DEFAULT_SETTINGS }, readOnly: false };
  }

  private write(s: DesktopSettings): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version: SETTINGS_VERSION, ...s }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
  }
}
