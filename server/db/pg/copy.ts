/**
 * `service db migrate-to`: copies a SQLite catalogue into an empty PostgreSQL
 * database. Everything happens in one PostgreSQL transaction (the schema
 * from the migrations, the rows in foreign-key order in batches, identity
 * sequences moved past the copied ids, then row counts and per-table
 * checksums read back and compared), so a failure at any step leaves the
 * database as empty as it was. The SQLite file is opened read-only.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { MIGRATIONS, type Migration } from '../migrations';
import { connectPostgres, relationCount } from './connect';
import { migratePostgres } from './migrate';

/** The copy cannot start: the source or the target is not in a state to copy (the CLI exits 2). */
export class CopyRefused extends Error {}
/** The copy ran but what PostgreSQL holds differs from the source; it was rolled back. */
export class CopyMismatch extends Error {}

export interface TableCopy {
  table: string;
  rows: number;
  /** Order-free digest of the rows (the sum of each row's SHA-256), the same on both sides. */
  checksum: string;
}

export interface CopyOptions {
  migrations?: Migration[];
  /** Rows per INSERT (capped so one statement stays under PostgreSQL's 65,535 parameters). */
  batchRows?: number;
  progress?: (line: string) => void;
}

/** Copies `sqliteFile` into the empty database at `url`; returns what was copied and verified. */
export async function copySqliteToPostgres(sqliteFile: string, url: string, o: CopyOptions = {}): Promise<TableCopy[]> {
  const migrations = o.migrations ?? MIGRATIONS;
  const lite = new Database(sqliteFile, { readonly: true, fileMustExist: true });
  try {
    assertFullyMigrated(lite, migrations);
    const tables = sourceTables(lite);
    const c = await connectPostgres(url);
    try {
      await assertEmpty(c, url);
      await c.query('BEGIN');
      try {
        await migratePostgres(c, migrations, { inTransaction: true });
        await assertSameColumns(c, tables);
        // Rows the migrations seed (tenant 1) come from the source like every other row.
        await c.query('DELETE FROM tenants');
        const copied: TableCopy[] = [];
        for (const t of tables) {
          copied.push(await copyTable(lite, c, t, o));
          o.progress?.(`${t.name}: ${copied[copied.length - 1].rows} rows`);
        }
        await resetIdentities(c);
        for (const want of copied) {
          const got = await digestPostgres(c, tables.find((t) => t.name === want.table)!);
          if (got.rows !== want.rows || got.checksum !== want.checksum) {
            throw new CopyMismatch(
              `${want.table}: SQLite has ${want.rows} rows (checksum ${want.checksum.slice(0, 16)}…), PostgreSQL ${got.rows} (${got.checksum.slice(0, 16)}…)`,
            );
          }
        }
        await c.query('COMMIT');
        return copied;
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        throw e;
      }
    } finally {
      await c.end().catch(() => {});
    }
  } finally {
    lite.close();
  }
}

interface SourceTable {
  name: string;
  columns: string[];
}

function assertFullyMigrated(lite: Database.Database, migrations: Migration[]): void {
  const hasLog = lite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'").get();
  if (!hasLog) throw new CopyRefused('the SQLite file is not a Filedock catalogue (it has no _migrations table)');
  const applied = new Set((lite.prepare('SELECT name FROM _migrations').all() as Array<{ name: string }>).map((r) => r.name));
  const known = new Set(migrations.map((m) => m.name));
  const pending = [...known].filter((n) => !applied.has(n));
  const unknown = [...applied].filter((n) => !known.has(n));
  if (pending.length)
    throw new CopyRefused(
      `the SQLite catalogue is not up to date (${pending.length} migration(s) pending, first ${pending[0]}): start this version of the service on it once, then copy`,
    );
  if (unknown.length) throw new CopyRefused(`the SQLite catalogue was written by a newer Filedock (${unknown[0]}): copy it with that version`);
}

/** The tables to copy, parents before children; a virtual (search) table is copied with its rowid. */
function sourceTables(lite: Database.Database): SourceTable[] {
  const rows = lite
    .prepare(
      "SELECT name, type FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'virtual') AND name NOT LIKE 'sqlite_%' AND name <> '_migrations' ORDER BY name",
    )
    .all() as Array<{ name: string; type: string }>;
  const tables = rows.map((r) => {
    const cols = (lite.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid').all(r.name) as Array<{ name: string }>).map((c) => c.name);
    return { name: r.name, columns: r.type === 'virtual' ? ['rowid', ...cols] : cols };
  });
  const parents = new Map(
    tables.map((t) => [
      t.name,
      new Set(
        (lite.prepare('SELECT "table" FROM pragma_foreign_key_list(?)').all(t.name) as Array<{ table: string }>)
          .map((f) => f.table)
          .filter((p) => p !== t.name),
      ),
    ]),
  );
  const ordered: SourceTable[] = [];
  const placed = new Set<string>();
  while (ordered.length < tables.length) {
    const next = tables.filter((t) => !placed.has(t.name) && [...parents.get(t.name)!].every((p) => placed.has(p) || !parents.has(p)));
    if (!next.length)
      throw new CopyRefused(
        `foreign keys form a cycle among ${tables
          .filter((t) => !placed.has(t.name))
          .map((t) => t.name)
          .join(', ')}`,
      );
    for (const t of next) {
      ordered.push(t);
      placed.add(t.name);
    }
  }
  return ordered;
}

async function assertEmpty(c: pg.Client, url: string): Promise<void> {
  const n = await relationCount(c);
  if (n > 0) {
    throw new CopyRefused(
      `the target database is not empty (${n} relations in schema ${(await c.query('SELECT current_schema() AS s')).rows[0].s}): migrate-to only fills an empty database; create a new one (${new URL(url).pathname.slice(1) || 'its name'} is taken)`,
    );
  }
}

async function assertSameColumns(c: pg.Client, tables: SourceTable[]): Promise<void> {
  const r = await c.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
  );
  const target = new Map<string, string[]>();
  for (const row of r.rows) target.set(row.table_name, [...(target.get(row.table_name) ?? []), row.column_name]);
  for (const t of tables) {
    const cols = target.get(t.name);
    if (!cols || [...cols].sort().join() !== [...t.columns].sort().join()) {
      throw new CopyMismatch(`table ${t.name} differs: SQLite has (${t.columns.join(', ')}), PostgreSQL (${cols?.join(', ') ?? 'no such table'})`);
    }
  }
}

const MAX_PARAMS = 65_000;

async function copyTable(lite: Database.Database, c: pg.Client, t: SourceTable, o: CopyOptions): Promise<TableCopy> {
  const perBatch = Math.max(1, Math.min(o.batchRows ?? 1000, Math.floor(MAX_PARAMS / t.columns.length)));
  const colList = t.columns.map((n) => pg.escapeIdentifier(n)).join(', ');
  const insertSql = (n: number) =>
    `INSERT INTO ${pg.escapeIdentifier(t.name)} (${colList}) VALUES ` +
    Array.from({ length: n }, (_, i) => `(${t.columns.map((_, j) => `$${i * t.columns.length + j + 1}`).join(', ')})`).join(', ');
  const digest = new RowDigest();
  // safeIntegers: 64-bit integers copied exactly, and told apart from REALs in the digest.
  const select = lite
    .prepare(`SELECT ${t.columns.map((n) => `"${n}"`).join(', ')} FROM "${t.name}"`)
    .raw(true)
    .safeIntegers(true);
  let batch: unknown[][] = [];
  const flush = async () => {
    if (!batch.length) return;
    await c.query({ text: insertSql(batch.length), values: batch.flat() });
    batch = [];
  };
  for (const row of select.iterate() as IterableIterator<unknown[]>) {
    digest.add(row);
    batch.push(row);
    if (batch.length >= perBatch) await flush();
  }
  await flush();
  return { table: t.name, rows: digest.rows, checksum: digest.hex() };
}

/** Moves every identity sequence past the highest copied id, so the next insert does not collide. */
async function resetIdentities(c: pg.Client): Promise<void> {
  const r = await c.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'`,
  );
  for (const { table_name: t, column_name: col } of r.rows) {
    const q = pg.escapeIdentifier;
    await c.query(`SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${q(col)}) FROM ${q(t)}), 0) + 1, false)`, [q(t), col]);
  }
}

async function digestPostgres(c: pg.Client, t: SourceTable): Promise<Omit<TableCopy, 'table'>> {
  const digest = new RowDigest();
  const cursor = `copy_check_${t.name}`;
  await c.query(
    `DECLARE ${pg.escapeIdentifier(cursor)} NO SCROLL CURSOR FOR SELECT ${t.columns.map((n) => pg.escapeIdentifier(n)).join(', ')} FROM ${pg.escapeIdentifier(t.name)}`,
  );
  for (;;) {
    const r = await c.query({ text: `FETCH 5000 FROM ${pg.escapeIdentifier(cursor)}`, rowMode: 'array' });
    for (const row of r.rows as unknown[][]) digest.add(row);
    if (r.rows.length < 5000) break;
  }
  await c.query(`CLOSE ${pg.escapeIdentifier(cursor)}`);
  return { rows: digest.rows, checksum: digest.hex() };
}

/**
 * An order-free digest of rows: each row's values encoded with their kind
 * (integer, real, text, blob, null) and length, hashed, and the hashes summed
 * modulo 2^256, so both sides may read in any order and a duplicated row
 * still counts.
 */
class RowDigest {
  rows = 0;
  private sum = 0n;
  private static readonly MOD = 1n << 256n;

  add(row: unknown[]): void {
    const h = createHash('sha256');
    for (const v of row) {
      const enc =
        v === null ? 'n' : typeof v === 'bigint' ? `i${v}` : typeof v === 'number' ? `r${v}` : Buffer.isBuffer(v) ? `b${v.toString('hex')}` : `s${String(v)}`;
      h.update(`${enc.length}:${enc}`);
    }
    this.sum = (this.sum + BigInt(`0x${h.digest('hex')}`)) % RowDigest.MOD;
    this.rows++;
  }

  hex(): string {
    return this.sum.toString(16).padStart(64, '0');
  }
}
