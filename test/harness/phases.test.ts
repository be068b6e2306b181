/**
 * What scripts/test.mjs decides for a run: a whole run (both databases) runs on PostgreSQL what needs it
 * (repository suites, `*.pg.test.ts` there only, the listed server suites: scripts/test-phases.mjs;
 * TEST_POSTGRES_ALL=1 every server suite), and child servers start from the build when it is fresh.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../helpers/tools';

const root = new URL('../..', import.meta.url).pathname;
/** A fixture's import line (built, so that this file's own text does not read as a suite on a helper). */
const uses = (helper: string) => `import {} from '../helpers/${helper}';\n`;
const passing = "import { test } from 'node:test';\ntest('runs', () => {});\n";

/** Runs scripts/test.mjs in a project of `files` (path → text); returns its output and the `phase file` rows it timed. */
function runProject(files: Record<string, string>, env: Record<string, string>, prepare: (dir: string) => void = () => undefined) {
  const { dir, cleanup } = tempDir('filedock-phases-');
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(join(dir, dirname(f)), { recursive: true });
      writeFileSync(join(dir, f), text);
    }
    prepare(dir);
    const { NODE_TEST_CONTEXT: _, CI: __, TEST_DATABASE: ___, TEST_POSTGRES_ALL: ____, TEST_BUILT: _____, ...rest } = process.env;
    // TEST_PG_SHARED=0: no cluster for a project whose files need none.
    const r = spawnSync(process.execPath, [join(root, 'scripts/test.mjs')], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 180_000,
      env: { ...rest, TEST_PG_SHARED: '0', ...env },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const rows = JSON.parse(readFileSync(join(dir, 'test-timings.json'), 'utf8')).files as Array<{ phase: string; file: string }>;
    return { stdout: r.stdout, rows: rows.map((x) => `${x.phase} ${x.file}`).sort() };
  } finally {
    cleanup();
  }
}

/** A server suite in the named list, one that is not, a repository suite, a PostgreSQL-only file, a unit test. */
const project = {
  'test/helpers/server.ts': 'export {};\n',
  'test/helpers/test-database.ts': 'export {};\n',
  'test/http/files.test.ts': uses('server') + passing,
  'test/http/other.test.ts': uses('server') + passing,
  'test/repo/users.repo.test.ts': uses('test-database') + passing,
  'test/repo/queue.pg.test.ts': passing,
  'test/unit/pure.test.ts': passing,
};

test('a whole run: repository suites, *.pg.test.ts and the listed server suites on PostgreSQL; the rest on SQLite only', () => {
  assert.deepEqual(runProject(project, { TEST_BOTH_DATABASES: '1' }).rows, [
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
  assert.deepEqual(runProject(project, { TEST_BOTH_DATABASES: '1', TEST_POSTGRES_ALL: '1' }).rows, [
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

test('child servers start from the build only while it is newer than every server source (TEST_BUILT)', () => {
  const expects = (value: string) => ({
    'server/main.ts': 'export {};\n',
    'package.json': '{}\n',
    'dist/.build-stamp': 'now\n',
    'test/built.test.ts': `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('built', () => assert.equal(process.env.TEST_BUILT, '${value}'));\n`,
  });
  const age = (dir: string, file: string, s: number) => utimesSync(join(dir, file), s, s);
  const now = Date.now() / 1000;
  const fresh = runProject(expects('1'), {}, (dir) => (age(dir, 'server/main.ts', now - 60), age(dir, 'package.json', now - 60)));
  assert.match(fresh.stdout, /child servers and the CLI run from the build/);
  const stale = runProject(expects('0'), {}, (dir) => age(dir, 'dist/.build-stamp', now - 60));
  assert.match(stale.stdout, /child servers and the CLI run from the sources/);
});
