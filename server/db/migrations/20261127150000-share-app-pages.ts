import { portable } from './kit';

/**
 * Public app pages (owner: shares; docs/app-plugins.md, "Public app pages"): a
 * page an app opened is a share row with the app (`plugin_name`), the view it
 * shows (`page_id`), a title and the files it exposes (`app_files`, JSON
 * `[{ref, rel}]` on the row's storage). The `kind` column's CHECK predates app
 * links and a SQLite CHECK cannot be widened without rebuilding a table other
 * rows point at: an app link is stored as kind `link` with `plugin_name` set,
 * and the shares repository reads it back as kind `app` (its one mapping).
 */
export const shareAppPages = portable('20261127150000-share-app-pages', ({ schema: s }) => [
  s.alterTable('shares').addColumn('plugin_name', 'text'),
  s.alterTable('shares').addColumn('page_id', 'text'),
  s.alterTable('shares').addColumn('title', 'text'),
  s.alterTable('shares').addColumn('app_files', 'text'),
  s.createIndex('shares_plugin').on('shares').column('plugin_name'),
]);
