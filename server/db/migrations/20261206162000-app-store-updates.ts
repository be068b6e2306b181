import { portable } from './kit';

/**
 * What the app store's update check keeps per installed app (owner: store;
 * docs/app-store.md, "Updates"): whether the admin let it update itself
 * (`auto_update`, off by default) and the last version a bell notice was rung
 * for (`notified_version`), so a check that runs again, or on another
 * instance, rings once per app version.
 */
export const appStoreUpdates = portable('20261206162000-app-store-updates', ({ schema: s, int }) => [
  s
    .createTable('app_store_updates')
    .addColumn('app_id', 'text', (c) => c.primaryKey())
    .addColumn('auto_update', int, (c) => c.notNull().defaultTo(0))
    .addColumn('notified_version', 'text')
    .addColumn('changed_at', 'text', (c) => c.notNull()),
]);
