/**
 * The app plugins' second set of tables (migration 20261127150000-app-plugin-host):
 * lock tokens an app holds through the host API, wake-up bookkeeping, and
 * licences (token per app, trusted store keys, the local revocation list).
 * This module is their only writer.
 */
import type { Db } from '../../db';

const now = () => new Date().toISOString();

export interface StoreKey { id: number; store: string; public_key_pem: string; added_at: string }
export interface LicenseRow { plugin: string; token: string; held_status: string | null; set_by: number | null; set_at: string }

export class AppHostRepo {
  constructor(private db: Db) {}

  // Lock tokens (host `locks.*`): keyed by app and the file's place when it was locked.
  tokenOf(plugin: string, storageId: number, rel: string): string | null {
    return this.db.first(this.db.k.selectFrom('app_plugin_lock_tokens').select('token').where('plugin', '=', plugin).where('storage_id', '=', storageId).where('rel', '=', rel))?.token ?? null;
  }
  putToken(plugin: string, storageId: number, rel: string, token: string): void {
    const t = now();
    this.db.run(this.db.k.insertInto('app_plugin_lock_tokens').values({ plugin, storage_id: storageId, rel, token, locked_at: t })
      .onConflict((oc) => oc.columns(['plugin', 'storage_id', 'rel']).doUpdateSet({ token, locked_at: t })));
  }
  /** The files an app holds locks on through the host (uninstall lets go of them). */
  tokensOf(plugin: string): Array<{ storage_id: number; rel: string }> {
    return this.db.all(this.db.k.selectFrom('app_plugin_lock_tokens').select(['storage_id', 'rel']).where('plugin', '=', plugin));
  }
  dropToken(plugin: string, storageId: number, rel: string): void {
    this.db.run(this.db.k.deleteFrom('app_plugin_lock_tokens').where('plugin', '=', plugin).where('storage_id', '=', storageId).where('rel', '=', rel));
  }

  // Wake-ups.
  lastWakeup(plugin: string): string | null {
    return this.db.first(this.db.k.selectFrom('app_plugin_wakeups').select('last_at').where('plugin', '=', plugin))?.last_at ?? null;
  }
  /**
   * Claims the app's wake-up when the last one is at least `intervalMs` old (or none): one statement,
   * so of several instances sharing the database exactly one wins. True when this caller won.
   */
  claimWakeup(plugin: string, intervalMs: number, at = new Date()): boolean {
    const t = at.toISOString();
    const before = new Date(at.getTime() - intervalMs).toISOString();
    const ins = this.db.run(this.db.k.insertInto('app_plugin_wakeups').values({ plugin, last_at: t, outcome: null }).onConflict((oc) => oc.column('plugin').doNothing()));
    if (ins > 0) return true;
    return this.db.run(this.db.k.updateTable('app_plugin_wakeups').set({ last_at: t, outcome: null }).where('plugin', '=', plugin).where('last_at', '<=', before)) > 0;
  }
  wakeupOutcome(plugin: string, outcome: string): void {
    this.db.run(this.db.k.updateTable('app_plugin_wakeups').set({ outcome: outcome.slice(0, 1000) }).where('plugin', '=', plugin));
  }
  /** Records a scheduled item as run; false when this key and due_at ran before (here or on another instance). */
  claimScheduled(plugin: string, key: string, dueAt: string): boolean {
    return this.db.run(this.db.k.insertInto('app_plugin_schedule_runs').values({ plugin, key, due_at: dueAt, op_id: null, ran_at: now() }).onConflict((oc) => oc.doNothing())) > 0;
  }
  scheduledOp(plugin: string, key: string, dueAt: string, opId: string): void {
    this.db.run(this.db.k.updateTable('app_plugin_schedule_runs').set({ op_id: opId }).where('plugin', '=', plugin).where('key', '=', key).where('due_at', '=', dueAt));
  }
  pruneScheduled(olderThan: string): void {
    this.db.run(this.db.k.deleteFrom('app_plugin_schedule_runs').where('ran_at', '<', olderThan));
  }

  // Licences.
  license(plugin: string): LicenseRow | null {
    return this.db.first(this.db.k.selectFrom('app_plugin_licenses').selectAll().where('plugin', '=', plugin)) ?? null;
  }
  setLicense(plugin: string, token: string, by: number | null): void {
    const t = now();
    this.db.run(this.db.k.insertInto('app_plugin_licenses').values({ plugin, token, held_status: null, set_by: by, set_at: t })
      .onConflict((oc) => oc.column('plugin').doUpdateSet({ token, held_status: null, set_by: by, set_at: t })));
  }
  removeLicense(plugin: string): boolean {
    return this.db.run(this.db.k.deleteFrom('app_plugin_licenses').where('plugin', '=', plugin)) > 0;
  }
  setHeldStatus(plugin: string, status: string | null): void {
    this.db.run(this.db.k.updateTable('app_plugin_licenses').set({ held_status: status }).where('plugin', '=', plugin));
  }
  storeKeys(store?: string): StoreKey[] {
    let q = this.db.k.selectFrom('app_store_keys').select(['id', 'store', 'public_key_pem', 'added_at']).orderBy('id');
    if (store !== undefined) q = q.where('store', '=', store);
    return this.db.all(q);
  }
  addStoreKey(store: string, pem: string, by: number | null): number {
    return this.db.first(this.db.k.insertInto('app_store_keys').values({ store, public_key_pem: pem, added_by: by, added_at: now() }).returning('id'))!.id;
  }
  removeStoreKey(id: number): boolean {
    return this.db.run(this.db.k.deleteFrom('app_store_keys').where('id', '=', id)) > 0;
  }
  revoked(id: string): boolean {
    return !!this.db.first(this.db.k.selectFrom('app_license_revocations').select('license_id').where('license_id', '=', id));
  }
  revocations(): Array<{ license_id: string; note: string | null; added_at: string }> {
    return this.db.all(this.db.k.selectFrom('app_license_revocations').select(['license_id', 'note', 'added_at']).orderBy('added_at'));
  }
  revoke(id: string, note: string | null, by: number | null): void {
    this.db.run(this.db.k.insertInto('app_license_revocations').values({ license_id: id, note, added_by: by, added_at: now() }).onConflict((oc) => oc.column('license_id').doNothing()));
  }
  unrevoke(id: string): boolean {
    return this.db.run(this.db.k.deleteFrom('app_license_revocations').where('license_id', '=', id)) > 0;
  }
}
