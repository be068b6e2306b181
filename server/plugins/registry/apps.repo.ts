/**
 * The app plugins' tables (installed apps, per-app key-value storage, trusted
 * publisher keys): this module is their only writer. An installed app keeps
 * the verified package's manifest, code and language packs, so loading an app
 * never reads the package again. Every method is asynchronous on `db.async`;
 * an install, an upgrade and a kv write under the app's storage caps each
 * decide and write in one statement or one unit of work.
 */
import type { Db, TenantScope } from '../../db';
import type { AppPluginsTable } from '../../db/tables';
import type { Manifest } from '../package/manifest';
import type { AppPackage, TrustedKey } from '../package/package';

/**
 * An installed app as a reference: its tenant and id (docs/tenants.md, "Step 1: apps": an app is installed
 * per tenant, so the id alone names none). An `InstalledApp` is one.
 */
export interface AppRef extends TenantScope {
  id: string;
}

/** An installed app as the rest of the plugins module sees it (JSON columns parsed). */
export interface InstalledApp extends AppRef {
  version: string;
  publisher: string;
  digest: string;
  manifest: Manifest;
  code: string;
  languages: Record<string, Record<string, string>>;
  icons: Record<string, string>;
  enabled: boolean;
  settings: Record<string, unknown>;
  approved_hosts: string[];
  installed_by: number | null;
  installed_at: string;
  updated_at: string;
}

/** An app's key-value storage caps (host API `kv.set`). */
export interface KvCaps {
  keys: number;
  bytes: number;
}

const now = () => new Date().toISOString();

/** JSON columns parsed; a manifest stored before `open` existed reads as having none. */
function parse(r: AppPluginsTable): InstalledApp {
  return {
    ...r,
    manifest: { open: [], ...JSON.parse(r.manifest) },
    languages: JSON.parse(r.languages),
    icons: JSON.parse(r.icons),
    enabled: !!r.enabled,
    settings: JSON.parse(r.settings),
    approved_hosts: JSON.parse(r.approved_hosts),
  };
}

/** The package's columns, written by an install and an upgrade alike. */
function packageRow(pkg: AppPackage, approvedHosts: string[], t: string) {
  return {
    id: pkg.manifest.id,
    version: pkg.manifest.version,
    publisher: pkg.manifest.publisher,
    digest: pkg.digest,
    manifest: JSON.stringify(pkg.manifest),
    code: pkg.code,
    languages: JSON.stringify(pkg.languages),
    icons: JSON.stringify(Object.fromEntries(Object.entries(pkg.icons).map(([n, b]) => [n, b.toString('base64')]))),
    approved_hosts: JSON.stringify(approvedHosts),
    updated_at: t,
  };
}

/** The cache's key of an app: its tenant and id. */
const keyOf = (s: TenantScope, id: string) => `${s.tenant_id}:${id}`;

export class AppsRepo {
  /** Apps by tenant and id, parsed once; every write below drops the entry (this module is the only writer). */
  private cache = new Map<string, InstalledApp | null>();
  /** Bumped by every write: a read that began before a write does not fill the cache with what it read. */
  private writes = 0;
  constructor(private db: Db) {}

  private forget(app: AppRef) {
    this.writes++;
    this.cache.delete(keyOf(app, app.id));
  }

  /** The tenant's installed app, or null (another tenant's app of the same id is not this one). */
  async get(s: TenantScope, id: string): Promise<InstalledApp | null> {
    const hit = this.cache.get(keyOf(s, id));
    if (hit !== undefined) return hit;
    const at = this.writes;
    const r = await this.db.async.first(this.db.k.selectFrom('app_plugins').selectAll().where('tenant_id', '=', s.tenant_id).where('id', '=', id));
    const app = r ? parse(r) : null;
    if (at === this.writes) this.cache.set(keyOf(s, id), app);
    return app;
  }

  /**
   * The app as this instance last read it, without the database; undefined when not read yet. For
   * presenters that run synchronously (an op's frame and the ops routes); `list()` at start and `get()`
   * on every run fill it, and a miss starts a read so the next call has it.
   */
  known(s: TenantScope, id: string): InstalledApp | null | undefined {
    const hit = this.cache.get(keyOf(s, id));
    if (hit === undefined) void this.get(s, id).catch(() => undefined);
    return hit;
  }

  /** Every app installed in the tenant, by id: one read of the ids, one of the rows not cached yet. */
  async list(s: TenantScope): Promise<InstalledApp[]> {
    const k = this.db.k;
    const cache = this.cache;
    const at = this.writes;
    const { ids, rows } = await this.db.async.read(function* (t) {
      const ids = (yield* t.all(k.selectFrom('app_plugins').select('id').where('tenant_id', '=', s.tenant_id).orderBy('id'))).map((r) => r.id);
      const missing = ids.filter((id) => !cache.get(keyOf(s, id)));
      const rows = missing.length ? yield* t.all(k.selectFrom('app_plugins').selectAll().where('tenant_id', '=', s.tenant_id).where('id', 'in', missing)) : [];
      return { ids, rows };
    });
    const fresh = new Map(rows.map((r) => [r.id, parse(r)]));
    if (at === this.writes) for (const [id, app] of fresh) this.cache.set(keyOf(s, id), app);
    return ids.map((id) => fresh.get(id) ?? cache.get(keyOf(s, id))).filter((a): a is InstalledApp => !!a);
  }

  /**
   * Installs a new app in the tenant (enabled, no settings); null when the tenant has an app with this id
   * already (one statement). Another tenant's app of the same id is no obstacle.
   */
  async install(s: TenantScope, pkg: AppPackage, by: number | null, approvedHosts: string[]): Promise<InstalledApp | null> {
    const t = now();
    const row = packageRow(pkg, approvedHosts, t);
    const n = await this.db.async.run(
      this.db.k
        .insertInto('app_plugins')
        .values({ ...row, tenant_id: s.tenant_id, enabled: 1, settings: '{}', installed_by: by, installed_at: t })
        .onConflict((oc) => oc.columns(['tenant_id', 'id']).doNothing()),
    );
    this.forget({ tenant_id: s.tenant_id, id: row.id });
    return n > 0 ? this.get(s, row.id) : null;
  }

  /**
   * Replaces an installed app's package, when its version is still `fromVersion` (the admin's settings and
   * enabled state are kept); null when it is gone or another upgrade came first (one conditional statement).
   */
  async upgrade(s: TenantScope, pkg: AppPackage, fromVersion: string, approvedHosts: string[]): Promise<InstalledApp | null> {
    const row = packageRow(pkg, approvedHosts, now());
    const n = await this.db.async.run(
      this.db.k.updateTable('app_plugins').set(row).where('tenant_id', '=', s.tenant_id).where('id', '=', row.id).where('version', '=', fromVersion),
    );
    this.forget({ tenant_id: s.tenant_id, id: row.id });
    return n > 0 ? this.get(s, row.id) : null;
  }

  /** Changes an app's admin fields when its version is still `version` (checked against that package); false otherwise. */
  async update(app: AppRef, version: string, patch: { enabled?: boolean; settings?: Record<string, unknown>; approved_hosts?: string[] }): Promise<boolean> {
    const n = await this.db.async.run(
      this.db.k
        .updateTable('app_plugins')
        .set({
          ...(patch.enabled !== undefined && { enabled: patch.enabled ? 1 : 0 }),
          ...(patch.settings !== undefined && { settings: JSON.stringify(patch.settings) }),
          ...(patch.approved_hosts !== undefined && { approved_hosts: JSON.stringify(patch.approved_hosts) }),
          updated_at: now(),
        })
        .where('tenant_id', '=', app.tenant_id)
        .where('id', '=', app.id)
        .where('version', '=', version),
    );
    this.forget(app);
    return n > 0;
  }

  /**
   * Removes an app and (by cascade) its key-value storage, licence, lock tokens and schedule; false when it
   * was not there. Another tenant's app of the same id keeps all of its own.
   */
  async remove(app: AppRef): Promise<boolean> {
    const n = await this.db.async.run(this.db.k.deleteFrom('app_plugins').where('tenant_id', '=', app.tenant_id).where('id', '=', app.id));
    this.forget(app);
    return n > 0;
  }

  // Per-app key-value storage (host API `kv.*`): the app's own, in its tenant.
  async kvGet(app: AppRef, key: string): Promise<string | null> {
    return (
      (
        await this.db.async.first(
          this.db.k.selectFrom('app_plugin_kv').select('value').where('tenant_id', '=', app.tenant_id).where('plugin', '=', app.id).where('key', '=', key),
        )
      )?.value ?? null
    );
  }
  async kvKeys(app: AppRef, prefix: string, limit: number): Promise<string[]> {
    const q = this.db.k
      .selectFrom('app_plugin_kv')
      .select('key')
      .where('tenant_id', '=', app.tenant_id)
      .where('plugin', '=', app.id)
      .where('key', '>=', prefix)
      .where('key', '<', prefix + '\uffff')
      .orderBy('key')
      .limit(limit);
    return (await this.db.async.all(q)).map((r) => r.key);
  }
  /**
   * Sets `key` unless the app's storage would pass `caps` (a new key past `keys`, or `bytes` in all): false
   * then, nothing written. One serializable unit: two writers counting the same rows cannot both fit.
   */
  kvSet(app: AppRef, key: string, value: string, caps: KvCaps): Promise<boolean> {
    const k = this.db.k;
    const { tenant_id, id: plugin } = app;
    return this.db.async.unit(
      function* (t) {
        const [st] = yield* t.sql<{ count: number | string; bytes: number | string }>(
          'SELECT count(*) AS count, coalesce(sum(length(key) + length(value)), 0) AS bytes FROM app_plugin_kv WHERE tenant_id = ? AND plugin = ?',
          [tenant_id, plugin],
        );
        const isNew = !(yield* t.first(
          k.selectFrom('app_plugin_kv').select('key').where('tenant_id', '=', tenant_id).where('plugin', '=', plugin).where('key', '=', key),
        ));
        // PostgreSQL answers count(*) and sum() of integers as text.
        if ((isNew && Number(st.count) >= caps.keys) || Number(st.bytes) + value.length > caps.bytes) return false;
        const at = now();
        yield* t.run(
          k
            .insertInto('app_plugin_kv')
            .values({ tenant_id, plugin, key, value, updated_at: at })
            .onConflict((oc) => oc.columns(['tenant_id', 'plugin', 'key']).doUpdateSet({ value, updated_at: at })),
        );
        return true;
      },
      { isolation: 'serializable' },
    );
  }
  async kvDelete(app: AppRef, key: string): Promise<boolean> {
    return (
      (await this.db.async.run(
        this.db.k.deleteFrom('app_plugin_kv').where('tenant_id', '=', app.tenant_id).where('plugin', '=', app.id).where('key', '=', key),
      )) > 0
    );
  }

  // Trusted publisher keys: the installation's (the platform operator's trust list), no tenant's.
  trustedKeys(): Promise<Array<TrustedKey & { id: number; added_at: string }>> {
    return this.db.async.all(this.db.k.selectFrom('app_publisher_keys').select(['id', 'publisher', 'public_key_pem', 'added_at']).orderBy('id'));
  }
  async addKey(k: TrustedKey, by: number | null): Promise<number> {
    return (await this.db.async.first(
      this.db.k
        .insertInto('app_publisher_keys')
        .values({ publisher: k.publisher, public_key_pem: k.public_key_pem, added_by: by, added_at: now() })
        .returning('id'),
    ))!.id;
  }
  async removeKey(id: number): Promise<boolean> {
    return (await this.db.async.run(this.db.k.deleteFrom('app_publisher_keys').where('id', '=', id))) > 0;
  }
}
