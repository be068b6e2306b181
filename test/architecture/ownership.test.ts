/**
 * Each table is written by its owning module only (server/db/owners.ts): every
 * INSERT / UPDATE / DELETE in server/, raw SQL or Kysely, is found by its text
 * and its file's module compared with the owner. A new table must be given an
 * owner before anything may write it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { TABLE_OWNERS } from '../../server/db/owners';
import { migrate } from '../../server/db';
import { MIGRATIONS } from '../../server/db/migrations';

const root = new URL('../../server', import.meta.url).pathname;
const WRITE =
  /\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+([a-z_]+)|\b(?:insertInto|updateTable|deleteFrom|replaceInto)\(\s*'([a-z_]+)'/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'migrations' ? [] : sources(p);
    return /\.ts$/.test(d.name) && !/\.test\.ts$/.test(d.name) ? [p] : [];
  });
}

/** `server/<module>/...` → module; a file at the top of server/ is the composition root. */
const moduleOf = (file: string): string => {
  const parts = relative(root, file).split('/');
  return parts.length > 1 ? parts[0] : 'root';
};

test('every write statement in server/ is in the module that owns its table', () => {
  const wrong: string[] = [];
  let writes = 0;
  for (const file of sources(root)) {
    for (const m of readFileSync(file, 'utf8').matchAll(WRITE)) {
      const table = m[1] ?? m[2];
      writes++;
      const owner = (TABLE_OWNERS as Record<string, string>)[table];
      // `service db migrate-to` copies every table (COPY, unseen here) and first empties what the migrations seeded.
      if (relative(root, file) === 'db/pg/copy.ts' && table === 'tenants') continue;
      if (owner !== moduleOf(file)) wrong.push(`${relative(root, file)} writes ${table} (owner: ${owner ?? 'none'})`);
    }
  }
  assert.ok(writes > 50, `the scan found the write statements (${writes})`);
  assert.deepEqual(wrong, []);
});

test('the owner table names every table the migrations create', () => {
  // Read back from a migrated database, so every way of writing a migration (raw SQL, the portable builder) counts.
  const db = new Database(':memory:');
  migrate(db, MIGRATIONS);
  const created = (
    db.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'virtual') AND name NOT LIKE 'sqlite_%'").all() as Array<{
      name: string;
    }>
  ).map((r) => r.name);
  db.close();
  const missing = created.filter((t) => !(t in TABLE_OWNERS));
  assert.ok(created.length > 20);
  assert.deepEqual(missing, []);
});
