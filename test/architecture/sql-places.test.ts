/**
 * Where SQL may be written (docs/architecture.md, "One asynchronous data layer"): in repositories
 * (`*.repo.ts`) and `server/db/`. Issue 30 moved the last files that held statements from before that rule;
 * a file anywhere else with a statement in it fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('../../server', import.meta.url).pathname;
/** A statement: prepared SQL, a Kysely builder or run, the synchronous or the asynchronous face of `Db` (with or without a row type: `async.sql<Row>(`). */
const SQL =
  /\.prepare\(|\bdb\.(all|first|run)\(|\.sqlite\.|\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto)\(|\basync\.(all|first|run|sql|unit)(<[^()]*>)?\(|sqlite\.transaction/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return sources(p);
    return /\.ts$/.test(d.name) && !/\.test\.ts$/.test(d.name) ? [p] : [];
  });
}

test('SQL is written only in repositories and server/db', () => {
  const files = sources(root).map((f) => relative(root, f));
  const withSql = files.filter((f) => SQL.test(readFileSync(join(root, f), 'utf8')));
  // The scan sees SQL where it is (the repositories), so finding none elsewhere means something.
  assert.ok(withSql.filter((f) => f.endsWith('.repo.ts')).length > 40, 'the scan finds the repositories');
  assert.deepEqual(
    withSql.filter((f) => !f.startsWith('db/') && !f.endsWith('.repo.ts')),
    [],
    'SQL outside a repository: put it in a *.repo.ts',
  );
});
