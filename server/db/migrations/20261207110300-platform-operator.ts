import { portable } from './kit';

/**
 * Multi-tenant mode, step 2 (docs/tenants.md, "Who is who"): `users.platform_operator`, the people who manage
 * tenants, updates, gateway listeners, global settings, the status page and /metrics. Tenant 1's first admin
 * is one (an existing installation's too: set here); the set-up page and first-run seeding set it on a new one.
 */
export const platformOperator = portable('20261207110300-platform-operator', ({ schema: s, int, per }) => [
  s.alterTable('users').addColumn('platform_operator', int, (c) => c.notNull().defaultTo(0)),
  per({
    sqlite: "UPDATE users SET platform_operator = 1 WHERE id = (SELECT MIN(id) FROM users WHERE tenant_id = 1 AND role = 'admin')",
    postgres: "UPDATE users SET platform_operator = 1 WHERE id = (SELECT MIN(id) FROM users WHERE tenant_id = 1 AND role = 'admin')",
  }),
]);
