import { portable } from './kit';

/**
 * A failure row keeps where its copy reads from when that is not its own path (owner: replication,
 * `replication/replication.repo.ts`): an append_only file moved away (into the trash) is copied to its old
 * path from where it went, and Fix's retry must read there too.
 */
export const replicaFailureFrom = portable('20261205090000-replica-failure-from', ({ schema: s }) => [
  s.alterTable('replica_failures').addColumn('from_rel', 'text'),
]);
