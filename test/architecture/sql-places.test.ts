/**
 * Where SQL may be written (docs/architecture.md, "One asynchronous data layer"): in repositories
 * (`*.repo.ts`) and `server/db/`. These files still hold statements from before that rule; the list may only
 * shrink (issue 30 moves them into repositories one by one): a new file with SQL fails, and so does a listed
 * file that no longer has any (take it off the list, so it cannot gain SQL back unnoticed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('../../server', import.meta.url).pathname;
/** A statement: prepared SQL, a Kysely builder or run, the synchronous or the asynchronous face of `Db`. */
const SQL = /\.prepare\(|\bdb\.(all|first|run)\(|\.sqlite\.|\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto)\(|\basync\.(all|first|run|sql|unit)\(|sqlite\.transaction/;

const LEGACY = new Set([
  'catalogue/sync.ts',
]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return sources(p);
    return /\.ts$/.test(d.name) && !/\.test\.ts$/.test(d.name) ? [p] : [];
  });
}

test('SQL is written only in repositories and server/db (the legacy list only shrinks)', () => {
  const withSql = sources(root)
    .map((f) => relative(root, f))
    .filter((f) => !f.startsWith('db/') && !f.endsWith('.repo.ts'))
    .filter((f) => SQL.test(readFileSync(join(root, f), 'utf8')));
  assert.ok(withSql.length > 0, 'the scan finds the legacy files');
  assert.deepEqual(withSql.filter((f) => !LEGACY.has(f)), [], 'new SQL outside a repository: put it in a *.repo.ts');
  assert.deepEqual([...LEGACY].filter((f) => !withSql.includes(f)), [], 'no SQL left here: take it off LEGACY');
});
