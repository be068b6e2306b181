/**
 * Applies the migrations' PostgreSQL scripts, each in its own transaction,
 * under an advisory lock so instances starting together migrate once. A
 * pending migration without a PostgreSQL form stops everything before the
 * first statement (docs/postgresql.md, "Writing a migration").
 */
import type pg from 'pg';
import type { Migration } from '../migrations';
import { inOrder } from '../migrations/order';

/** The advisory lock key every instance takes while migrating ("filedock" in ASCII). */
const MIGRATION_LOCK = 0x66696c65646f636bn;

export class UnportedMigrationError extends Error {
  constructor(readonly names: string[]) {
    super(
      `migration${names.length > 1 ? 's' : ''} ${names.join(', ')} ha${names.length > 1 ? 've' : 's'} no PostgreSQL form: write ${names.length > 1 ? 'them' : 'it'} with portable() (docs/postgresql.md, "Writing a migration")`,
    );
  }
}

/**
 * Applies what `_migrations` does not list yet; returns the names applied.
 * `inTransaction`: the caller holds a transaction around everything (a copy
 * that must leave nothing behind when it fails), so no per-migration commit.
 */
export async function migratePostgres(c: pg.ClientBase, migrations: Migration[], o: { inTransaction?: boolean } = {}): Promise<string[]> {
  const lockKey = [MIGRATION_LOCK.toString()];
  await c.query(o.inTransaction ? 'SELECT pg_advisory_xact_lock($1)' : 'SELECT pg_advisory_lock($1)', lockKey);
  try {
    await c.query('CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
    const done = new Set((await c.query<{ name: string }>('SELECT name FROM _migrations')).rows.map((r) => r.name));
    const pending = inOrder(migrations).filter((m) => !done.has(m.name));
    const unported = pending.filter((m) => m.postgres === undefined).map((m) => m.name);
    if (unported.length) throw new UnportedMigrationError(unported);
    for (const m of pending) {
      if (!o.inTransaction) await c.query('BEGIN');
      try {
        await c.query(m.postgres!);
        await c.query('INSERT INTO _migrations (name, applied_at) VALUES ($1, $2)', [m.name, new Date().toISOString()]);
        if (!o.inTransaction) await c.query('COMMIT');
      } catch (e) {
        if (!o.inTransaction) await c.query('ROLLBACK');
        throw new Error(`migration ${m.name} failed on PostgreSQL: ${(e as Error).message}`, { cause: e });
      }
    }
    return pending.map((m) => m.name);
  } finally {
    if (!o.inTransaction) await c.query('SELECT pg_advisory_unlock($1)', lockKey);
  }
}
