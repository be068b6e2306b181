import type { Migration } from './types';

/** Migrations in the order they apply: by name, whose timestamp leads. */
export const inOrder = (migrations: Migration[]): Migration[] => [...migrations].sort((a, b) => a.name.localeCompare(b.name));
