/**
 * scripts/test-watchdog.mjs: a test file that leaves a child process open
 * after its tests, or that never finishes, fails with what it left open
 * listed and its child processes killed, instead of hanging the run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/tools';

const WATCHDOG = new URL('../../scripts/test-watchdog.mjs', import.meta.url).href;

/** Runs one test file as scripts/test.mjs does, with short limits; bounded so this test cannot hang either. */
function runFile(body: string, limits: { TEST_EXIT_GRACE_S: string; TEST_FILE_TIMEOUT_S: string }): { status: number | null; out: string; pid: number } {
  const { dir, cleanup } = tempDir('filedock-watchdog-');
  try {
    const file = join(dir, 'fixture.test.mjs');
    const pidFile = join(dir, 'pid');
    writeFileSync(
      file,
      `import { test } from 'node:test';\nimport { spawn } from 'node:child_process';\nimport { writeFileSync } from 'node:fs';\n${body.replace('PIDFILE', JSON.stringify(pidFile))}\n`,
    );
    // Not this file's own runner context: the fixture runs under a runner of its own, as in `npm test`.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const r = spawnSync(process.execPath, ['--import', WATCHDOG, '--test', '--test-reporter=spec', file], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...env, ...limits },
    });
    const pid = Number(spawnSync('cat', [pidFile], { encoding: 'utf8' }).stdout);
    return { status: r.status, out: r.stdout + r.stderr, pid };
  } finally {
    cleanup();
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !/\bZ\b/.test(spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout);
  } catch {
    return false;
  }
};

/** Whether `pid` is gone within 5 s: the kill is a signal, and a loaded (or niced) machine reaps it a moment later. */
const goneSoon = async (pid: number): Promise<boolean> => {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
};

test('a child process left open after the tests fails the file, is listed and is killed', async () => {
  const r = runFile(
    `test('leaves cat running', () => { const c = spawn('cat', [], { stdio: ['pipe', 'pipe', 'inherit'] }); writeFileSync(PIDFILE, String(c.pid)); });`,
    {
      TEST_EXIT_GRACE_S: '1',
      TEST_FILE_TIMEOUT_S: '600', // not this limit, however slowly a loaded machine starts the file
    },
  );
  assert.notEqual(r.status, 0, r.out);
  assert.match(r.out, /did not exit within 1 s/);
  assert.match(r.out, new RegExp(`child process ${r.pid}: cat`));
  assert.equal(await goneSoon(r.pid), true, 'the leaked child was killed');
});

test('a test that never finishes fails the file at its time limit', async () => {
  const r = runFile(
    `test('waits forever', async () => { const c = spawn('cat', [], { stdio: ['pipe', 'pipe', 'inherit'] }); writeFileSync(PIDFILE, String(c.pid)); await new Promise(() => {}); });`,
    {
      TEST_EXIT_GRACE_S: '1',
      TEST_FILE_TIMEOUT_S: '4',
    },
  );
  assert.notEqual(r.status, 0, r.out);
  assert.match(r.out, /still running after 4 s/);
  assert.equal(await goneSoon(r.pid), true, 'its child was killed');
});
