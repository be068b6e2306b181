import { portable } from './kit';

/**
 * WebDAV dead properties (owner: gateways), one row per property of a node,
 * keyed by storage id and path so a storage rename keeps them; `dir` lets a
 * PROPFIND of a folder read its children's properties with one query.
 */
export const davProps = portable('20261126130000-dav-props', ({ schema: s, int, withoutRowid }) => [
  withoutRowid(
    s
      .createTable('dav_props')
      .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('dir', 'text', (c) => c.notNull())
      .addColumn('ns', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('dav_props_pk', ['storage_id', 'path', 'ns', 'name']),
  ),
  s.createIndex('dav_props_dir').on('dav_props').columns(['storage_id', 'dir']),
]);
