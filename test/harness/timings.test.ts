/**
 * scripts/test.mjs records each test file's wall time in test-timings.json
 * and prints the slowest files at the end of a run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/tools';

const root = new URL('../..', import.meta.url).pathname;

test('a run writes test-timings.json with every file and prints the slowest', () => {
  // A project of two test files of its own, run as `npm test` runs ours (tsx from our node_modules).
  const { dir, cleanup } = tempDir('filedock-timings-');
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    mkdirSync(join(dir, 'test'));
    writeFileSync(join(dir, 'test', 'quick.test.ts'), "import { test } from 'node:test';\ntest('quick', () => {});\n");
    writeFileSync(join(dir, 'test', 'slow.test.ts'), "import { test } from 'node:test';\ntest('slow', () => new Promise((r) => setTimeout(r, 1500)));\n");
    const { NODE_TEST_CONTEXT: _, CI: __, TEST_BOTH_DATABASES: ___, ...env } = process.env;
    const r = spawnSync(process.execPath, [join(root, 'scripts/test.mjs')], { cwd: dir, encoding: 'utf8', timeout: 120_000, env });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const timings = JSON.parse(readFileSync(join(dir, 'test-timings.json'), 'utf8'));
    const files = timings.files as Array<{ phase: string; file: string; ms: number; ok: boolean }>;
    assert.deepEqual(files.map((f) => f.file).sort(), ['test/quick.test.ts', 'test/slow.test.ts']);
    assert.deepEqual(
      files.map((f) => f.ms),
      files.map((f) => f.ms).sort((a, b) => b - a),
      'slowest first',
    );
    const slow = files.find((f) => f.file === 'test/slow.test.ts')!;
    assert.deepEqual([slow.phase, slow.ok], ['SQLite', true]);
    assert.ok(slow.ms >= 1500, JSON.stringify(slow));
    // Printed in the same order (which file is slower overall depends on the machine's load, not asserted).
    const printed = [...r.stdout.matchAll(/^# +\d+\.\d s {2}(test\/\w+\.test\.ts)$/gm)].map((m) => m[1]);
    assert.match(r.stdout, /# The ten slowest test files \(of 2; all in test-timings\.json\):/);
    assert.deepEqual(
      printed,
      files.map((f) => f.file),
    );
  } finally {
    cleanup();
  }
});

test('files start slowest first, by test/suite-times.json, not by name', () => {
  const { dir, cleanup } = tempDir('filedock-order-');
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    mkdirSync(join(dir, 'test'));
    const log = join(dir, 'order.log');
    for (const n of ['a', 'b', 'c'])
      writeFileSync(
        join(dir, 'test', `${n}.test.ts`),
        `import { test } from 'node:test';\nimport { appendFileSync } from 'node:fs';\ntest('${n}', () => appendFileSync(${JSON.stringify(log)}, '${n}'));\n`,
      );
    writeFileSync(join(dir, 'test', 'suite-times.json'), JSON.stringify({ SQLite: { 'test/c.test.ts': 90, 'test/a.test.ts': 30 } }));
    const { NODE_TEST_CONTEXT: _, CI: __, TEST_BOTH_DATABASES: ___, ...env } = process.env;
    const r = spawnSync(process.execPath, [join(root, 'scripts/test.mjs')], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...env, TEST_CONCURRENCY: '1' },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    // c (90 s) before a (30 s) before b (unknown: 5 s).
    assert.equal(readFileSync(log, 'utf8'), 'cab');
  } finally {
    cleanup();
  }
});
