import { portable } from './kit';

/**
 * The per-link limits of public links, decided in the database so they hold
 * across instances (owner: shares, `shares/link-guard.ts`). `link_streams`:
 * one row per admitted stream in one of the link's numbered slots (1..cap; the
 * primary key makes the cap exact), held by an instance under a lease (`until`,
 * ms) it renews, so a killed instance's slots free up. `link_visitors`: the
 * client addresses a link saw, with when (ms).
 */
export const linkStreams = portable('20261127160100-link-streams', ({ schema: s, int }) => [
  s
    .createTable('link_streams')
    .addColumn('share_id', int, (c) => c.notNull())
    .addColumn('slot', int, (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('until', int, (c) => c.notNull())
    .addPrimaryKeyConstraint('link_streams_pk', ['share_id', 'slot']),
  s.createIndex('link_streams_holder').on('link_streams').column('holder'),
  s
    .createTable('link_visitors')
    .addColumn('share_id', int, (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('seen_at', int, (c) => c.notNull())
    .addPrimaryKeyConstraint('link_visitors_pk', ['share_id', 'ip']),
  s.createIndex('link_visitors_seen').on('link_visitors').column('seen_at'),
]);
