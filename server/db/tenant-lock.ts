/**
 * One tenant's count-then-insert units, one after the other (docs/tenants.md, "Step 4: the leftovers"): a unit
 * that counts a tenant's rows against a quota and then inserts one yields this first. SQLite's unit is already
 * an IMMEDIATE transaction (one writer at a time); on PostgreSQL it holds the tenant's row until the unit ends,
 * so a second unit of the same tenant waits there and, under read committed, counts what the first committed.
 */
import type { Db } from './index';
import type { Tx, Unit } from './async';
import type { TenantScope } from './tenant-tables';

function* holdTenant(t: Tx, db: Pick<Db, 'dialect'>, s: TenantScope): Unit<void> {
  if (db.dialect === 'postgres') yield* t.sql('SELECT id FROM tenants WHERE id = ? FOR UPDATE', [s.tenant_id]);
}

/**
 * Refuses one more row of the tenant past `limit`: the tenant held, then its rows counted by `count` (SQL
 * naming `tenant_id`, and its parameters); over it, the error `over(used)` gives, and the unit writes nothing.
 */
export function* withinLimit(
  t: Tx,
  db: Pick<Db, 'dialect'>,
  s: TenantScope,
  limit: number,
  count: [string, unknown[]],
  over: (used: number) => Error,
): Unit<void> {
  yield* holdTenant(t, db, s);
  const [{ n }] = yield* t.sql<{ n: number | string }>(count[0], count[1]);
  if (Number(n) + 1 > limit) throw over(Number(n));
}
