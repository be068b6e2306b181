import { portable } from './kit';

/**
 * Op leases for several instances on one database (owner: jobs). `lease_owner`
 * is the instance id (random per process start) that claimed a running op;
 * `lease_until` (already in `ops`) is renewed while it runs. A running op whose
 * lease passed is taken over by another instance (docs/operations.md,
 * "Several instances").
 */
export const opsLease = portable('20261127150000-ops-lease', ({ schema: s }) => [
  s.alterTable('ops').addColumn('lease_owner', 'text'),
  s.createIndex('ops_lease').on('ops').columns(['status', 'lease_until']),
]);
