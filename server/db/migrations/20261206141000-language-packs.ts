import { portable } from './kit';

/**
 * Language packs installed from a store (owner: store; docs/app-store.md,
 * "Language packs"): one row per language, its verified pack as JSON text
 * (`strings`), and where it came from. An install, upgrade or uninstall is one
 * statement, so a language is either wholly the old pack or wholly the new one.
 */
export const languagePacks = portable('20261206141000-language-packs', ({ schema: s, int }) => [
  s
    .createTable('language_packs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('store_id', int, (c) => c.references('app_store_connections.id').onDelete('set null'))
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('pack', 'text', (c) => c.notNull())
    .addColumn('installed_at', 'text', (c) => c.notNull()),
]);
