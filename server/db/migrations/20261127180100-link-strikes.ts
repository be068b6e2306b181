import { portable } from './kit';

/**
 * The accelerator strikes of public links shared by every instance (owner: shares, `shares/link-guard.ts`):
 * one row per strike of an address on a link, with when (ms), counted over the strike window. A stream's slot
 * also records its address, so "this address already holds a stream of the link" holds across instances.
 */
export const linkStrikes = portable('20261127180100-link-strikes', ({ schema: s, int }) => [
  s
    .createTable('link_strikes')
    .addColumn('share_id', int, (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('at', int, (c) => c.notNull()),
  s.createIndex('link_strikes_ip').on('link_strikes').columns(['share_id', 'ip', 'at']),
  s.alterTable('link_streams').addColumn('ip', 'text'),
]);
