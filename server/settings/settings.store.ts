import type { ChangeChannel, Db } from '../db';
import { AppError } from '../errors';
import { SettingsRepo } from './settings.repo';

type Check<T> = (v: unknown) => v is T;
interface Def<T> {
  default: T;
  check: Check<T>;
  /** Shown as `reason` when a value is refused. */
  rule: string;
}

const int =
  (min: number, max: number): Check<number> =>
  (v): v is number =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
const bool: Check<boolean> = (v): v is boolean => typeof v === 'boolean';
const text =
  (max: number): Check<string> =>
  (v): v is string =>
    typeof v === 'string' && v.length <= max;
const def = <T>(d: T, check: Check<T>, rule: string): Def<T> => ({ default: d, check, rule });

export interface WebhookTargetSetting {
  id: string;
  url: string;
  /** Allow-list of event names; empty means every event. */
  events: string[];
  /** Encrypted HMAC key (lib/crypto `encrypt`); never shown. */
  secret: string;
  enabled: boolean;
  /** The tenant whose events it hears and whose admins manage it; absent (saved before tenants): tenant 1. */
  tenant_id?: number;
}

/** GET /metrics (docs/operations.md, "Metrics"): off by default; `token` is the bearer token encrypted (lib/crypto `encrypt`), '' before the first. */
export interface MetricsSetting {
  enabled: boolean;
  access: 'token' | 'lan';
  token: string;
}

const isMetrics = (v: unknown): v is MetricsSetting => {
  const m = v as MetricsSetting;
  return (
    !!m &&
    typeof m === 'object' &&
    Object.keys(m).length === 3 &&
    typeof m.enabled === 'boolean' &&
    (m.access === 'token' || m.access === 'lan') &&
    typeof m.token === 'string' &&
    m.token.length <= 1024
  );
};

/** A flat record of short strings and flags (the OIDC settings: their fields are checked by auth/oidc). */
const isFlatRecord = (v: unknown): v is Record<string, string | boolean> =>
  !!v &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  Object.keys(v).length <= 32 &&
  Object.values(v).every((x) => typeof x === 'boolean' || (typeof x === 'string' && x.length <= 4096));

const isTarget = (v: unknown): v is WebhookTargetSetting => {
  const t = v as WebhookTargetSetting;
  return (
    !!t &&
    typeof t.id === 'string' &&
    typeof t.url === 'string' &&
    Array.isArray(t.events) &&
    typeof t.secret === 'string' &&
    typeof t.enabled === 'boolean' &&
    (t.tenant_id === undefined || Number.isInteger(t.tenant_id))
  );
};

/** Request prices per driver: US dollars per 1,000 requests of each class, 0..1000 each (catalogue/meter.ts). */
const isPriceTable = (v: unknown): v is Record<string, { list: number; head: number; get: number; put: number }> =>
  !!v &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  Object.keys(v).length <= 32 &&
  Object.values(v).every(
    (p) =>
      !!p &&
      typeof p === 'object' &&
      ['list', 'head', 'get', 'put'].every((k) => {
        const n = (p as Record<string, unknown>)[k];
        return typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= 1000;
      }),
  );

/** Every admin-editable key with its default and range (the spec's Limits). */
export const SETTINGS = {
  trash_retention_days: def(30, int(1, 3650), '1..3650'),
  /** Anyone may create a `user` account at the sign-in page; seeded once from SERVICE_ALLOW_SIGNUP. */
  allow_signup: def(false, bool, 'true or false'),
  /** Ceiling for new links in days (0 = none); seeded once from SERVICE_SHARE_MAX_TTL. */
  share_max_ttl_days: def(7, int(0, 3650), '0..3650'),
  /** null = unset (trim to 20 per file on each snapshot); 0 = unlimited, no sweep. */
  versions_keep_n: def<number | null>(null, (v): v is number | null => v === null || int(0, 1000)(v), '0..1000 or null'),
  av_enabled: def(false, bool, 'true or false'),
  av_mode: def<'binary' | 'daemon'>('binary', (v): v is 'binary' | 'daemon' => v === 'binary' || v === 'daemon', 'binary or daemon'),
  /** `host:port`, `[v6]:port`, or a unix socket path (`/run/clamav/clamd.ctl` or `unix:/...`). */
  av_clamd_addr: def('', text(1024), 'host:port or a socket path'),
  av_max_scan_mb: def(100, int(1, 10240), '1..10240'),
  av_save_scan_window_minutes: def(30, int(2, 60), '2..60'),
  /** Signature database (file or folder) passed to clamscan with `-d`; empty = clamscan's own. */
  av_database: def('', text(4096), 'a path'),
  /** The older single webhook URL: every event, signed with `webhook_secret` when that is set. */
  webhook_url: def('', text(2048), 'an http(s) URL'),
  webhook_secret: def('', text(1024), 'an encrypted key'),
  /** OIDC sign-in (issuer, client, claims; the client secret encrypted). auth/oidc reads, checks and writes it through a port. */
  oidc: def<Record<string, string | boolean>>({}, isFlatRecord, 'an object of strings and flags'),
  /** Replication status report schedule (croner syntax; replication checks it before saving). */
  replica_report_cron: def('0 6 * * *', text(256), 'a cron expression'),
  replica_report_enabled: def(true, bool, 'true or false'),
  /** Restore drill schedule (croner syntax; empty = never): monthly, the 1st at 03:00, before that day's full audit. */
  replica_drill_cron: def('0 3 1 * *', text(256), 'a cron expression or empty'),
  /** Content audit schedules (croner syntax; empty = never): a random sample daily at 04:30, every file on the 1st at 05:00. */
  replica_audit_cron: def('30 4 * * *', text(256), 'a cron expression or empty'),
  replica_audit_full_cron: def('0 5 1 * *', text(256), 'a cron expression or empty'),
  /** Files per linked storage in a sampled audit. */
  replica_audit_sample_size: def(50, int(1, 100_000), '1..100000'),
  /** Replication mode of a path no rule matches. */
  replica_default_mode: def<'mirror' | 'append_only' | 'skip'>(
    'mirror',
    (v): v is 'mirror' | 'append_only' | 'skip' => v === 'mirror' || v === 'append_only' || v === 'skip',
    'mirror, append_only or skip',
  ),
  /** The AI assistant's admin settings (provider, sealed API key, limits); the assistant module checks the fields. */
  assistant: def<Record<string, unknown>>(
    {},
    (v): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v) && JSON.stringify(v).length <= 16_384,
    'an object',
  ),
  /** Uplink protection (docs/desktop.md): null follows the environment (SERVICE_PUBLIC_EGRESS_MBPS and friends). */
  public_egress_mbps: def<number | null>(null, (v): v is number | null => v === null || int(0, 100_000)(v), '0..100000 or null'),
  public_link_max_streams: def<number | null>(null, (v): v is number | null => v === null || int(0, 10_000)(v), '0..10000 or null'),
  public_link_max_addresses: def<number | null>(null, (v): v is number | null => v === null || int(0, 1_000_000)(v), '0..1000000 or null'),
  /** The governor's CPU budget in percent of one core (docs/desktop.md); null follows SERVICE_BACKGROUND_CPU. */
  background_cpu_percent: def<number | null>(null, (v): v is number | null => v === null || int(0, 6400)(v), '0..6400 or null'),
  /** Overrides of the meter's default prices, by driver name; a driver absent here uses the default. */
  meter_prices: def<Record<string, { list: number; head: number; get: number; put: number }>>(
    {},
    isPriceTable,
    'per driver {list, head, get, put}, each 0..1000 dollars per 1,000 requests',
  ),
  /** App plugins for users (docs/app-plugins.md); off answers `app_plugins_disabled`, admin routes keep working. */
  app_plugins_enabled: def(true, bool, 'true or false'),
  /** The app store (docs/app-store.md): off answers `app_store_disabled` on every store route. */
  app_store_enabled: def(true, bool, 'true or false'),
  /** Home folders for new people (files/homes.ts): on, on which storage (null = the default storage), under which folder. */
  homes_enabled: def(true, bool, 'true or false'),
  home_storage_id: def<number | null>(null, (v): v is number | null => v === null || int(1, 2 ** 31)(v), 'a storage id or null'),
  home_folder: def('Users', (v): v is string => typeof v === 'string' && v.length <= 1024 && !v.split('/').includes('..'), 'a folder path'),
  metrics: def<MetricsSetting>({ enabled: false, access: 'token', token: '' }, isMetrics, '{enabled, access: token or lan, token}'),
  /** Scheduled backups of Filedock itself (backup/): croner syntax, empty = off (no target is chosen on a new install). */
  backup_cron: def('', text(256), 'a cron expression or empty'),
  /** Backups kept in the target folder; older ones are deleted after each new one. */
  backup_keep: def(7, int(1, 1000), '1..1000'),
  /** UI path of the folder the backups go to (`/Files/Backups`); empty = none chosen. */
  backup_target: def('', text(4096), 'a folder path'),
  /** How protocol gateways show encrypted folders (docs/vault.md): `hidden` (not at all) or `ciphertext` (read only, to members). */
  gateways_encrypted_folders: def<'hidden' | 'ciphertext'>(
    'hidden',
    (v): v is 'hidden' | 'ciphertext' => v === 'hidden' || v === 'ciphertext',
    'hidden or ciphertext',
  ),
  webhook_targets: def<WebhookTargetSetting[]>(
    [],
    (v): v is WebhookTargetSetting[] => Array.isArray(v) && v.length <= 50 && v.every(isTarget),
    'at most 50 targets',
  ),
} satisfies Record<string, Def<any>>;

export type SettingKey = keyof typeof SETTINGS;
export type SettingValues = { [K in SettingKey]: (typeof SETTINGS)[K]['default'] };

export class SettingsStore {
  private repo: SettingsRepo;
  private listeners = new Set<(key: SettingKey) => void>();
  /**
   * Every stored key, parsed and checked; a key absent here has its default. Read whole by `load()` at
   * start and kept by this module's writes (it is the only writer of its rows) and other instances' notices,
   * so `get` stays synchronous without a statement.
   */
  private cache = new Map<SettingKey, unknown>();
  private channel: ChangeChannel | null = null;
  /** Re-reads after notices run one after another, so an older read never lands after a newer one. */
  private reloads: Promise<void> = Promise.resolve();

  constructor(db: Db) {
    this.repo = new SettingsRepo(db);
  }

  /** Reads every stored key (one statement); awaited where the store is built, before the first `get`. */
  async load(): Promise<void> {
    // In line with the notices' re-reads, so a notice that came meanwhile is applied after it.
    const done = this.reloads.then(() => this.readAll());
    this.reloads = done.catch(() => {});
    await done;
  }

  private async readAll(): Promise<void> {
    const rows = await this.repo.all();
    this.cache.clear();
    for (const r of rows) if (r.key in SETTINGS) this.cache.set(r.key as SettingKey, this.parse(r.key as SettingKey, r.value));
  }

  /** The stored value, or the default when the row is missing or no longer passes its check. */
  get<K extends SettingKey>(key: K): SettingValues[K] {
    return (this.cache.has(key) ? this.cache.get(key) : SETTINGS[key].default) as SettingValues[K];
  }

  private parse<K extends SettingKey>(key: K, stored: string | undefined): SettingValues[K] {
    const d = SETTINGS[key] as Def<SettingValues[K]>;
    if (stored === undefined) return d.default;
    try {
      const v = JSON.parse(stored);
      return d.check(v) ? v : d.default;
    } catch {
      return d.default;
    }
  }

  /** Stores `value` after its check (`validation_failed` with `field` = key otherwise); tells listeners and the other instances. */
  async set<K extends SettingKey>(key: K, value: SettingValues[K]): Promise<void> {
    this.check(key, value);
    const text = JSON.stringify(value);
    await this.repo.put(key, text, new Date().toISOString());
    this.stored(key, text);
  }

  /**
   * Read-decide-write of one value (a list of targets, an object of fields): `next` gets the stored value and
   * answers the new one (checked; it may throw to refuse), in one unit of work, so two changes at once (two
   * requests, two instances) never both start from the same old value. `next` may run more than once.
   */
  async update<K extends SettingKey>(key: K, next: (cur: SettingValues[K]) => SettingValues[K]): Promise<{ from: SettingValues[K]; to: SettingValues[K] }> {
    const r = await this.repo.change(key, (cur) => JSON.stringify(this.check(key, next(this.parse(key, cur)))), new Date().toISOString());
    this.stored(key, r.after);
    return { from: this.parse(key, r.before), to: this.get(key) };
  }

  /** After a write committed: the copy (parsed back, never the caller's object), the listeners, the other instances. */
  private stored(key: SettingKey, text: string): void {
    this.cache.set(key, JSON.parse(text));
    for (const fn of this.listeners) fn(key);
    this.channel?.publish('settings', { key });
  }

  /**
   * Follows settings changed through other instances (several instances on one database): the key is
   * re-read and this instance's listeners run, as after a local `set`; after `resync` (notices may have been
   * lost) every key is re-read and the listeners run for those that changed.
   */
  attachChannel(channel: ChangeChannel): void {
    this.channel = channel;
    channel.subscribe((event, data) => {
      if (event === 'resync') return this.queue(() => this.resync());
      if (event !== 'settings') return;
      const key = (data as { key?: SettingKey } | null)?.key;
      if (!key || !(key in SETTINGS)) return;
      this.queue(async () => {
        this.cache.set(key, this.parse(key, await this.repo.value(key)));
        for (const fn of this.listeners) fn(key);
      });
    });
  }

  private queue(fn: () => Promise<void>): void {
    // A failed re-read (database away) keeps the last copy; the next notice or resync reads again.
    this.reloads = this.reloads.then(fn).catch(() => {});
  }

  private async resync(): Promise<void> {
    const before = new Map(this.cache);
    await this.readAll();
    for (const key of Object.keys(SETTINGS) as SettingKey[]) {
      if (JSON.stringify(before.get(key)) === JSON.stringify(this.cache.get(key))) continue;
      for (const fn of this.listeners) fn(key);
    }
  }

  /** Stores `value` only when `key` has never been stored (first-boot seeding from the environment). */
  async seed<K extends SettingKey>(key: K, value: SettingValues[K]): Promise<void> {
    this.check(key, value);
    const text = JSON.stringify(value);
    const stored = (await this.repo.seed(key, text, new Date().toISOString())) ? text : await this.repo.value(key);
    // Another instance starting beside this one may have seeded it since `load()`.
    this.cache.set(key, this.parse(key, stored));
  }

  /** Throws `validation_failed` when `value` does not fit `key`; returns it typed otherwise. */
  check<K extends SettingKey>(key: K, value: unknown): SettingValues[K] {
    const d = SETTINGS[key] as Def<SettingValues[K]>;
    if (!d.check(value)) throw new AppError('validation_failed', { field: key, reason: d.rule }, { field: key, reason: d.rule });
    return value;
  }

  /** Runs `fn` after every successful `set` (live reconfiguration); returns the unsubscribe. */
  onChange(fn: (key: SettingKey) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}
