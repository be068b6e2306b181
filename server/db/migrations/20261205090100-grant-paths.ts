import { portable } from './kit';

/**
 * A grant may name a folder (owner: catalogue): `path` '' is the whole storage
 * (every grant made before), a relative path gives that folder and what is
 * inside it (a person's home folder). Existing grants keep their meaning.
 */
export const grantPaths = portable('20261205090100-grant-paths', ({ schema: s }) => [
  s.alterTable('storage_grants').addColumn('path', 'text', (c) => c.notNull().defaultTo('')),
]);
