import { portable } from './kit';

/**
 * Share suspension (owner: shares): a link the uplink guard suspended on an
 * anomaly (too many distinct addresses, a download accelerator) keeps when and
 * why until its owner or an admin re-enables it.
 */
export const shareSuspension = portable('20261127120000-share-suspension', ({ schema: s }) => [
  s.alterTable('shares').addColumn('suspended_at', 'text'),
  s.alterTable('shares').addColumn('suspended_reason', 'text'),
]);
