import { portable } from './kit';

/**
 * Login throttle counters shared by several instances on one database (owner:
 * auth, `auth/throttle.ts`; used on PostgreSQL, SQLite keeps them in memory).
 * `key` is `<scope>|<a:login | i:address | u:person>`; times in ms.
 */
export const loginFailures = portable('20261127151000-login-failures', ({ schema: s, int }) => [
  s
    .createTable('login_failures')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', int, (c) => c.notNull())
    .addColumn('first_at', int, (c) => c.notNull())
    .addColumn('locked_until', int, (c) => c.notNull().defaultTo(0)),
]);
