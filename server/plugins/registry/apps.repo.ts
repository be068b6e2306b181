/**
 * The app plugins' tables (installed apps, per-app key-value storage, trusted
 * publisher keys): this module is their only writer. An installed app keeps
 * the verified package's manifest, code and language packs, so loading an app
 * never reads the package again.
 */
import type { Db } from '../../db';
import type { AppPluginsTable } from '../../db/tables';
import type { Manifest } from '../package/manifest';
import type { AppPackage, TrustedKey } from '../package/package';

/** An installed app as the rest of the plugins module sees it (JSON columns parsed). */
export interface InstalledApp {
  id: string;
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

const now = () => new Date().toISOString();

/** JSON columns parsed; a manifest stored before `open` existed reads as having none. */
function parse(r: AppPluginsTable): InstalledApp {
  return {
    ...r,
    manifest: { open: [], ...JSON.parse(r.manifest) }, languages: JSON.parse(r.languages), icons: JSON.parse(r.icons), enabled: !!r.enabled,
    settings: JSON.parse(r.settings), approved_hosts: JSON.parse(r.approved_hosts),
  };
}

export class AppsRepo {
  /** Apps by id, parsed once; every write below drops the entry (this module is the only writer). */
  private cache = new Map<string, InstalledApp | null>();
  constructor(private db: Db) {}

  get(id: string): InstalledApp | null {
    if (!this.cache.has(id)) {
      const r = this.db.first(this.db.k.selectFrom('app_plugins').selectAll().where('id', '=', id));
      this.cache.set(id, r ? parse(r) : null);
    }
    return this.cache.get(id)!;
  }

  list(): InstalledApp[] {
    const ids = this.db.all(this.db.k.selectFrom('app_plugins').select('id').orderBy('id'));
    return ids.map((r) => this.get(r.id)!).filter(Boolean);
  }

  /** Installs or replaces (upgrade) an app's package; the admin's settings and approvals are kept on upgrade. */
  put(pkg: AppPackage, by: number | null, approvedHosts: string[]): InstalledApp {
    const t = now();
    const row = {
      id: pkg.manifest.id, version: pkg.manifest.version, publisher: pkg.manifest.publisher, digest: pkg.digest,
      manifest: JSON.stringify(pkg.manifest), code: pkg.code, languages: JSON.stringify(pkg.languages),
      icons: JSON.stringify(Object.fromEntries(Object.entries(pkg.icons).map(([n, b]) => [n, b.toString('base64')]))),
      approved_hosts: JSON.stringify(approvedHosts), updated_at: t,
    };
    this.db.run(
      this.db.k.insertInto('app_plugins').values({ ...row, enabled: 1, settings: '{}', installed_by: by, installed_at: t })
        .onConflict((oc) => oc.column('id').doUpdateSet(row)),
    );
    this.cache.delete(row.id);
    return this.get(row.id)!;
  }

  update(id: string, patch: { enabled?: boolean; settings?: Record<string, unknown>; approved_hosts?: string[] }): void {
    this.db.run(
      this.db.k.updateTable('app_plugins').set({
        ...(patch.enabled !== undefined && { enabled: patch.enabled ? 1 : 0 }),
        ...(patch.settings !== undefined && { settings: JSON.stringify(patch.settings) }),
        ...(patch.approved_hosts !== undefined && { approved_hosts: JSON.stringify(patch.approved_hosts) }),
        updated_at: now(),
      }).where('id', '=', id),
    );
    this.cache.delete(id);
  }

  /** Removes an app and (by cascade) its key-value storage. */
  remove(id: string): boolean {
    const n = this.db.run(this.db.k.deleteFrom('app_plugins').where('id', '=', id));
    this.cache.delete(id);
    return n > 0;
  }

  // Per-app key-value storage (host API `kv.*`).
  kvGet(plugin: string, key: string): string | null {
    return this.db.first(this.db.k.selectFrom('app_plugin_kv').select('value').where('plugin', '=', plugin).where('key', '=', key))?.value ?? null;
  }
  kvKeys(plugin: string, prefix: string, limit: number): string[] {
    const q = this.db.k.selectFrom('app_plugin_kv').select('key').where('plugin', '=', plugin).where('key', '>=', prefix).where('key', '<', prefix + '\uffff').orderBy('key').limit(limit);
    return this.db.all(q).map((r) => r.key);
  }
  kvStats(plugin: string): { count: number; bytes: number } {
    const r = this.db.sqlite.prepare('SELECT count(*) AS count, coalesce(sum(length(key) + length(value)), 0) AS bytes FROM app_plugin_kv WHERE plugin = ?').get(plugin) as { count: number; bytes: number };
    return r;
  }
  kvSet(plugin: string, key: string, value: string): void {
    this.db.run(this.db.k.insertInto('app_plugin_kv').values({ plugin, key, value, updated_at: now() }).onConflict((oc) => oc.columns(['plugin', 'key']).doUpdateSet({ value, updated_at: now() })));
  }
  kvDelete(plugin: string, key: string): boolean {
    return this.db.run(this.db.k.deleteFrom('app_plugin_kv').where('plugin', '=', plugin).where('key', '=', key)) > 0;
  }

  // Trusted publisher keys.
  trustedKeys(): Array<TrustedKey & { id: number; added_at: string }> {
    return this.db.all(this.db.k.selectFrom('app_publisher_keys').select(['id', 'publisher', 'public_key_pem', 'added_at']).orderBy('id'));
  }
  addKey(k: TrustedKey, by: number | null): number {
    // RETURNING, not last_insert_rowid(): the same statement runs on PostgreSQL.
    return this.db.first(this.db.k.insertInto('app_publisher_keys').values({ publisher: k.publisher, public_key_pem: k.public_key_pem, added_by: by, added_at: now() }).returning('id'))!.id;
  }
  removeKey(id: number): boolean {
    return this.db.run(this.db.k.deleteFrom('app_publisher_keys').where('id', '=', id)) > 0;
  }
}
