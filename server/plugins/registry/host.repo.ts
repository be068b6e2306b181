/**
 * The app plugins' second set of tables (migration 20261127150000-app-plugin-host):
 * lock tokens an app holds through the host API, wake-up bookkeeping, and
 * licences (token per app, trusted store keys, the local revocation list).
 * This module is their only writer. Every row but the store keys' and the
 * revocations' (the installation's) is an app's, in its tenant: those methods
 * take the app (`AppRef`) first. Every method is asynchronous on `db.async`;
 * each claim is one conditional statement, so instances sharing the database
 * need no lock between a read and a write.
 */
import type { Db, TenantScope } from '../../db';
import type { AppRef } from './apps.repo';

const now = () => new Date().toISOString();

export interface StoreKey {
  id: number;
  store: string;
  public_key_pem: string;
  added_at: string;
}
export interface LicenseRow {
  tenant_id: number;
  plugin: string;
  token: string;
  held_status: string | null;
  set_by: number | null;
  set_at: string;
}
/** What an app's licence status is computed from (licenses.ts), read together. */
export interface LicenseFacts {
  row: LicenseRow | null;
  storeKeys: string[];
  revoked: boolean;
}

export class AppHostRepo {
  constructor(private db: Db) {}

  // Lock tokens (host `locks.*`): keyed by app and the file's place when it was locked.
  async tokenOf(app: AppRef, storageId: number, rel: string): Promise<string | null> {
    return (
      (
        await this.db.async.first(
          this.db.k
            .selectFrom('app_plugin_lock_tokens')
            .select('token')
            .where('tenant_id', '=', app.tenant_id)
            .where('plugin', '=', app.id)
            .where('storage_id', '=', storageId)
            .where('rel', '=', rel),
        )
      )?.token ?? null
    );
  }
  async putToken(app: AppRef, storageId: number, rel: string, token: string): Promise<void> {
    const t = now();
    await this.db.async.run(
      this.db.k
        .insertInto('app_plugin_lock_tokens')
        .values({ tenant_id: app.tenant_id, plugin: app.id, storage_id: storageId, rel, token, locked_at: t })
        .onConflict((oc) => oc.columns(['tenant_id', 'plugin', 'storage_id', 'rel']).doUpdateSet({ token, locked_at: t })),
    );
  }
  /** The files an app holds locks on through the host (uninstall lets go of them). */
  tokensOf(app: AppRef): Promise<Array<{ storage_id: number; rel: string }>> {
    return this.db.async.all(
      this.db.k.selectFrom('app_plugin_lock_tokens').select(['storage_id', 'rel']).where('tenant_id', '=', app.tenant_id).where('plugin', '=', app.id),
    );
  }
  async dropToken(app: AppRef, storageId: number, rel: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .deleteFrom('app_plugin_lock_tokens')
        .where('tenant_id', '=', app.tenant_id)
        .where('plugin', '=', app.id)
        .where('storage_id', '=', storageId)
        .where('rel', '=', rel),
    );
  }

  // Wake-ups.
  /**
   * Claims the app's wake-up when the last one is at least `intervalMs` old (or none): one statement (an
   * insert whose conflict updates only under that condition), so of several callers or instances sharing
   * the database exactly one wins. True when this caller won.
   */
  async claimWakeup(app: AppRef, intervalMs: number, at = new Date()): Promise<boolean> {
    const t = at.toISOString();
    const before = new Date(at.getTime() - intervalMs).toISOString();
    return (
      (await this.db.async.run(
        this.db.k
          .insertInto('app_plugin_wakeups')
          .values({ tenant_id: app.tenant_id, plugin: app.id, last_at: t, outcome: null })
          .onConflict((oc) =>
            oc
              .columns(['tenant_id', 'plugin'])
              .doUpdateSet({ last_at: t, outcome: null })
              .where('app_plugin_wakeups.tenant_id', '=', app.tenant_id)
              .where('app_plugin_wakeups.last_at', '<=', before),
          ),
      )) > 0
    );
  }
  async wakeupOutcome(app: AppRef, outcome: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .updateTable('app_plugin_wakeups')
        .set({ outcome: outcome.slice(0, 1000) })
        .where('tenant_id', '=', app.tenant_id)
        .where('plugin', '=', app.id),
    );
  }
  /** Records a scheduled item as run; false when this key and due_at ran before (here or on another instance). */
  async claimScheduled(app: AppRef, key: string, dueAt: string): Promise<boolean> {
    return (
      (await this.db.async.run(
        this.db.k
          .insertInto('app_plugin_schedule_runs')
          .values({ tenant_id: app.tenant_id, plugin: app.id, key, due_at: dueAt, op_id: null, ran_at: now() })
          .onConflict((oc) => oc.doNothing()),
      )) > 0
    );
  }
  async scheduledOp(app: AppRef, key: string, dueAt: string, opId: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .updateTable('app_plugin_schedule_runs')
        .set({ op_id: opId })
        .where('tenant_id', '=', app.tenant_id)
        .where('plugin', '=', app.id)
        .where('key', '=', key)
        .where('due_at', '=', dueAt),
    );
  }
  /** Forgets the tenants' scheduled runs recorded before `olderThan`. */
  async pruneScheduled(tenants: readonly TenantScope[], olderThan: string): Promise<void> {
    if (!tenants.length) return;
    await this.db.async.run(
      this.db.k
        .deleteFrom('app_plugin_schedule_runs')
        .where(
          'tenant_id',
          'in',
          tenants.map((t) => t.tenant_id),
        )
        .where('ran_at', '<', olderThan),
    );
  }

  // Licences: an app's token is its tenant's; store keys and revocations are the installation's.
  async license(app: AppRef): Promise<LicenseRow | null> {
    return (
      (await this.db.async.first(
        this.db.k.selectFrom('app_plugin_licenses').selectAll().where('tenant_id', '=', app.tenant_id).where('plugin', '=', app.id),
      )) ?? null
    );
  }
  /**
   * The app's licence row, the keys trusted for `store` and whether the licence id that `idOf` reads from
   * the row's token is revoked: one read (no snapshot needed: a change invalidates the computed status).
   */
  licenseFacts(app: AppRef, store: string | null, idOf: (token: string) => string | null): Promise<LicenseFacts> {
    const k = this.db.k;
    return this.db.async.read(function* (t) {
      const row = (yield* t.first(k.selectFrom('app_plugin_licenses').selectAll().where('tenant_id', '=', app.tenant_id).where('plugin', '=', app.id))) ?? null;
      const keys = row && store !== null ? yield* t.all(k.selectFrom('app_store_keys').select('public_key_pem').where('store', '=', store).orderBy('id')) : [];
      const id = row && idOf(row.token);
      const revoked = id ? !!(yield* t.first(k.selectFrom('app_license_revocations').select('license_id').where('license_id', '=', id))) : false;
      return { row, storeKeys: keys.map((r) => r.public_key_pem), revoked };
    });
  }
  async setLicense(app: AppRef, token: string, by: number | null): Promise<void> {
    const t = now();
    await this.db.async.run(
      this.db.k
        .insertInto('app_plugin_licenses')
        .values({ tenant_id: app.tenant_id, plugin: app.id, token, held_status: null, set_by: by, set_at: t })
        .onConflict((oc) =>
          oc
            .columns(['tenant_id', 'plugin'])
            .doUpdateSet({ token, held_status: null, set_by: by, set_at: t })
            .where('app_plugin_licenses.tenant_id', '=', app.tenant_id),
        ),
    );
  }
  async removeLicense(app: AppRef): Promise<boolean> {
    return (await this.db.async.run(this.db.k.deleteFrom('app_plugin_licenses').where('tenant_id', '=', app.tenant_id).where('plugin', '=', app.id))) > 0;
  }
  /**
   * Moves the held status from `from` to `to` unless another caller moved it first: whether this caller did
   * (so of two checks finding the same change, one audits it).
   */
  async moveHeldStatus(app: AppRef, from: string | null, to: string | null): Promise<boolean> {
    const q = this.db.k.updateTable('app_plugin_licenses').set({ held_status: to }).where('tenant_id', '=', app.tenant_id).where('plugin', '=', app.id);
    return (await this.db.async.run(from === null ? q.where('held_status', 'is', null) : q.where('held_status', '=', from))) > 0;
  }
  storeKeys(store?: string): Promise<StoreKey[]> {
    let q = this.db.k.selectFrom('app_store_keys').select(['id', 'store', 'public_key_pem', 'added_at']).orderBy('id');
    if (store !== undefined) q = q.where('store', '=', store);
    return this.db.async.all(q);
  }
  async addStoreKey(store: string, pem: string, by: number | null): Promise<number> {
    return (await this.db.async.first(
      this.db.k.insertInto('app_store_keys').values({ store, public_key_pem: pem, added_by: by, added_at: now() }).returning('id'),
    ))!.id;
  }
  async removeStoreKey(id: number): Promise<boolean> {
    return (await this.db.async.run(this.db.k.deleteFrom('app_store_keys').where('id', '=', id))) > 0;
  }
  revocations(): Promise<Array<{ license_id: string; note: string | null; added_at: string; source: string | null }>> {
    return this.db.async.all(this.db.k.selectFrom('app_license_revocations').select(['license_id', 'note', 'added_at', 'source']).orderBy('added_at'));
  }
  /**
   * Makes `source`'s revocations exactly `ids` (a store's list, read again): adds the new ones, lifts those it
   * no longer lists. An id the admin revoked by hand stays theirs. How many were added and lifted.
   */
  syncRevocations(source: string, ids: readonly string[]): Promise<{ added: number; lifted: number }> {
    const k = this.db.k;
    const at = now();
    return this.db.async.unit(function* (t) {
      const had = new Set((yield* t.all(k.selectFrom('app_license_revocations').select('license_id').where('source', '=', source))).map((r) => r.license_id));
      const want = new Set(ids);
      const gone = [...had].filter((id) => !want.has(id));
      let lifted = 0;
      for (let i = 0; i < gone.length; i += 500)
        lifted += yield* t.run(
          k
            .deleteFrom('app_license_revocations')
            .where('source', '=', source)
            .where('license_id', 'in', gone.slice(i, i + 500)),
        );
      const fresh = [...want].filter((id) => !had.has(id));
      let added = 0;
      for (let i = 0; i < fresh.length; i += 500) {
        const values = fresh.slice(i, i + 500).map((license_id) => ({ license_id, note: null, added_by: null, added_at: at, source }));
        added += yield* t.run(
          k
            .insertInto('app_license_revocations')
            .values(values)
            .onConflict((oc) => oc.column('license_id').doNothing()),
        );
      }
      return { added, lifted };
    });
  }
  async revoke(id: string, note: string | null, by: number | null): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('app_license_revocations')
        .values({ license_id: id, note, added_by: by, added_at: now() })
        .onConflict((oc) => oc.column('license_id').doNothing()),
    );
  }
  async unrevoke(id: string): Promise<boolean> {
    return (await this.db.async.run(this.db.k.deleteFrom('app_license_revocations').where('license_id', '=', id))) > 0;
  }
}
