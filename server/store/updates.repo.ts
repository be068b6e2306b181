/**
 * Per-app update choices and notices (migration 20261206162000-app-store-updates):
 * the only writer of `app_store_updates`. Asynchronous on `db.async`.
 */
import type { Db } from '../db';

export class StoreUpdatesRepo {
  constructor(private db: Db) {}

  /** The ids of the apps allowed to update themselves. */
  async autoUpdating(): Promise<Set<string>> {
    const rows = await this.db.async.all(this.db.k.selectFrom('app_store_updates').select('app_id').where('auto_update', '=', 1));
    return new Set(rows.map((r) => r.app_id));
  }

  async setAuto(appId: string, on: boolean): Promise<void> {
    const changed_at = new Date().toISOString();
    await this.db.async.run(
      this.db.k
        .insertInto('app_store_updates')
        .values({ app_id: appId, auto_update: on ? 1 : 0, changed_at })
        .onConflict((oc) => oc.column('app_id').doUpdateSet({ auto_update: on ? 1 : 0, changed_at })),
    );
  }

  /**
   * Claims the notice for `version` of the app: true for the one caller that records it first (a check-and-set,
   * so two checks at once, or two instances, ring once); false when it was claimed already.
   */
  async claimNotice(appId: string, version: string): Promise<boolean> {
    const changed_at = new Date().toISOString();
    await this.db.async.run(
      this.db.k
        .insertInto('app_store_updates')
        .values({ app_id: appId, auto_update: 0, changed_at })
        .onConflict((oc) => oc.column('app_id').doNothing()),
    );
    const n = await this.db.async.run(
      this.db.k
        .updateTable('app_store_updates')
        .set({ notified_version: version, changed_at })
        .where('app_id', '=', appId)
        .where((eb) => eb.or([eb('notified_version', 'is', null), eb('notified_version', '<>', version)])),
    );
    return n > 0;
  }

  /** Forgets an uninstalled app's choice: installed again, it starts with automatic updates off. */
  async remove(appId: string): Promise<void> {
    await this.db.async.run(this.db.k.deleteFrom('app_store_updates').where('app_id', '=', appId));
  }
}
