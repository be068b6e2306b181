import { portable } from './kit';

/**
 * Licences online (docs/app-store.md, "Licences online"): a revocation the
 * admin entered keeps `source` null, one read from a store's signed
 * revocation list says which (`store:<connection id>`), so the daily refresh
 * lifts only its own. Per connection: the list's ETag, when it was last read
 * (a store unreachable for 30 days warns) and when that warning was rung.
 */
export const storeLicences = portable('20261206185500-store-licences', ({ schema: s }) => [
  s.alterTable('app_license_revocations').addColumn('source', 'text'),
  s.alterTable('app_store_connections').addColumn('revocations_etag', 'text'),
  s.alterTable('app_store_connections').addColumn('revocations_at', 'text'),
  s.alterTable('app_store_connections').addColumn('revocations_warned_at', 'text'),
]);
