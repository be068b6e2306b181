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
import { TABLE_OWNERS } from '../../server/db/owners';

const root = new URL('../../server', import.meta.url).pathname;
const WRITE = /\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+([a-z_]+)|\b(?:insertInto|updateTable|deleteFrom|replaceInto)\(\s*'([a-z_]+)'/g;

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
      if (owner !== moduleOf(file)) wrong.push(`${relative(root, file)} writes ${table} (owner: ${owner ?? 'none'})`);
    }
  }
  assert.ok(writes > 50, `the scan found the write statements (${writes})`);
  assert.deepEqual(wrong, []);
});

test('the owner table names every table the migrations create', () => {
  const dir = join(root, 'db/migrations');
  const created = new Set<string>();
  // In migration order: a table a later migration drops is gone.
  for (const f of readdirSync(dir).sort()) {
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/(CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?|DROP TABLE (?:IF EXISTS )?)([a-z_]+)/g))
      if (m[1].startsWith('DROP')) created.delete(m[2]);
      else created.add(m[2]);
  }
  const missing = [...created].filter((t) => !(t in TABLE_OWNERS));
  assert.ok(created.size > 20);
  assert.deepEqual(missing, []);
});
