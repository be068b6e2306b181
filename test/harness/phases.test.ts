/**
 * A whole run (both databases) runs on PostgreSQL what needs it: repository suites, `*.pg.test.ts` (there
 * only) and the listed server suites (scripts/test-phases.mjs); TEST_POSTGRES_ALL=1 every server suite.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../helpers/tools';

const root = new URL('../..', import.meta.url).pathname;
/** A fixture's import line (built, so that this file's own text does not read as a suite on a helper). */
const uses = (helper: string) => `import {} from '../helpers/${helper}';\n`;

/** Runs scripts/test.mjs as a whole run on both databases in a project of a few files; returns `phase file` rows. */
function wholeRun(extraEnv: Record<string, string>): string[] {
  const { dir, cleanup } = tempDir('filedock-phases-');
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const files: Record<string, string> = {
      'test/helpers/server.ts': 'export {};\n',
      'test/helpers/test-database.ts': 'export {};\n',
      // A server suite in the named list, one that is not, a repository suite, a PostgreSQL-only file, a unit test.
      'test/http/files.test.ts': uses('server'),
      'test/http/other.test.ts': uses('server'),
      'test/repo/users.repo.test.ts': uses('test-database'),
      'test/repo/queue.pg.test.ts': '',
      'test/unit/pure.test.ts': '',
    };
    for (const [f, head] of Object.entries(files)) {
      mkdirSync(join(dir, dirname(f)), { recursive: true });
      writeFileSync(join(dir, f), f.includes('helpers/') ? head : `${head}import { test } from 'node:test';\ntest('runs', () => {});\n`);
    }
    const { NODE_TEST_CONTEXT: _, CI: __, TEST_DATABASE: ___, TEST_POSTGRES_ALL: ____, ...env } = process.env;
    // TEST_PG_SHARED=0: no cluster for a project whose files need none.
    const r = spawnSync(process.execPath, [join(root, 'scripts/test.mjs')], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 180_000,
      env: { ...env, TEST_BOTH_DATABASES: '1', TEST_PG_SHARED: '0', ...extraEnv },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const rows = JSON.parse(readFileSync(join(dir, 'test-timings.json'), 'utf8')).files as Array<{ phase: string; file: string }>;
    return rows.map((x) => `${x.phase} ${x.file}`).sort();
  } finally {
    cleanup();
  }
}

test('a whole run: repository suites, *.pg.test.ts and the listed server suites on PostgreSQL; the rest on SQLite only', () => {
  assert.deepEqual(wholeRun({}), [
    'PostgreSQL test/http/files.test.ts',
    'PostgreSQL test/repo/queue.pg.test.ts',
    'PostgreSQL test/repo/users.repo.test.ts',
    'SQLite test/http/files.test.ts',
    'SQLite test/http/other.test.ts',
    'SQLite test/repo/users.repo.test.ts',
    'SQLite test/unit/pure.test.ts',
  ]);
});

test('TEST_POSTGRES_ALL=1: every server suite on PostgreSQL too', () => {
  assert.deepEqual(wholeRun({ TEST_POSTGRES_ALL: '1' }), [
    'PostgreSQL test/http/files.test.ts',
    'PostgreSQL test/http/other.test.ts',
    'PostgreSQL test/repo/queue.pg.test.ts',
    'PostgreSQL test/repo/users.repo.test.ts',
    'SQLite test/http/files.test.ts',
    'SQLite test/http/other.test.ts',
    'SQLite test/repo/users.repo.test.ts',
    'SQLite test/unit/pure.test.ts',
  ]);
});
