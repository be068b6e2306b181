// Over 60 s in CI (test-timings.json; issue 37): about twenty `service` processes, each a Node start, and a serve that drains on SIGTERM.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, freePort } from '../helpers/tools';
import { SERVICE_CLI } from '../helpers/child-server';

const CLI = SERVICE_CLI;
const run = (args: string[], env: Record<string, string> = {}, input?: string) =>
  spawnSync(process.execPath, [...CLI, ...args], { env: { ...process.env, SERVICE_UPDATE_CHECK: '0', ...env }, input, encoding: 'utf8', timeout: 60_000 });

describe('service CLI', () => {
  test('version and help', () => {
    const v = run(['version']);
    assert.equal(v.status, 0);
    assert.match(v.stdout.trim(), /^\d+\.\d+\.\d+$/);
    const h = run(['--help']);
    assert.equal(h.status, 0);
    assert.match(h.stdout, /serve/);
    assert.match(run(['user', '--help']).stdout, /user add/);
    assert.match(run(['storage', '--help']).stdout, /storage add/);
    assert.equal(run(['bogus']).status, 64);
  });

  test('a bad configuration exits 2 and names every bad key', () => {
    const r = run(['serve'], { SERVICE_PORT: 'eighty', SERVICE_LOG_LEVEL: 'chatty', SERVICE_DATA_DIR: '/tmp/unused' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /SERVICE_PORT/);
    assert.match(r.stderr, /SERVICE_LOG_LEVEL/);
  });

  test('user add, list, passwd; storage add, list, remove with the API gates', () => {
    const { dir, cleanup } = tempDir();
    const env = { SERVICE_DATA_DIR: dir };
    try {
      const add = run(['user', 'add', '--email', 'cli@example.test', '--role', 'admin'], env, 'cli-password\n');
      assert.equal(add.status, 0, add.stderr);
      assert.match(add.stdout, /created user 1 cli@example\.test/);
      assert.notEqual(run(['user', 'add', '--email', 'cli@example.test', '--password', 'another-pw'], env).status, 0);
      const list = run(['user', 'list', '--json'], env);
      assert.equal(JSON.parse(list.stdout)[0].role, 'admin');
      assert.equal(run(['user', 'passwd', '--email', 'cli@example.test', '--password', 'changed-password'], env).status, 0);

      const root = join(dir, 'files');
      assert.equal(run(['storage', 'add', '--name', 'Disk', '--driver', 'nfs', '--config', '{}'], env).status, 64, 'unknown driver refused');
      assert.equal(run(['storage', 'add', '--name', 'Disk', '--driver', 'local', '--config', '[1]'], env).status, 64, 'config must be an object');
      assert.equal(run(['storage', 'add', '--name', 'Disk', '--driver', 'local', '--config', '{"path":"/"}'], env).status, 64, 'root guard');
      const warn = run(['storage', 'add', '--name', 'Later', '--driver', 'local', '--config', '{}'], env);
      assert.equal(warn.status, 0, 'missing required fields only warn');
      assert.match(warn.stderr, /warning: config\.path/);
      const ok = run(['storage', 'add', '--name', 'Disk', '--driver', 'local', '--config', JSON.stringify({ path: root })], env);
      assert.equal(ok.status, 0, ok.stderr);
      const sl = run(['storage', 'list'], env);
      assert.match(sl.stdout, /Disk\s+local/);
      assert.equal(run(['storage', 'remove', '--name', 'Disk'], env).status, 0);
      assert.doesNotMatch(run(['storage', 'list'], env).stdout, /Disk/);
    } finally {
      cleanup();
    }
  });

  test('serve: a second instance on the same data dir refuses; SIGTERM drains and exits 0', async () => {
    const { dir, cleanup } = tempDir();
    const port = await freePort();
    const env = {
      ...process.env,
      SERVICE_DATA_DIR: dir,
      SERVICE_PORT: String(port),
      SERVICE_HOST: '127.0.0.1',
      SERVICE_UPDATE_CHECK: '0',
      SERVICE_ADMIN_EMAIL: 'a@example.test',
      SERVICE_ADMIN_PASSWORD: 'drain-password',
    };
    const p = spawn(process.execPath, [...CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      for (let i = 0; i < 1200; i++) {
        try {
          if ((await fetch(`http://127.0.0.1:${port}/api/capabilities`)).ok) break;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      const second = run(['serve'], { SERVICE_DATA_DIR: dir, SERVICE_PORT: '0' });
      assert.equal(second.status, 3, second.stderr);
      assert.match(second.stderr, /already running on the data folder/);
      // An in-flight request (a login spends ~100 ms hashing) finishes during the drain.
      const slow = fetch(`http://127.0.0.1:${port}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'a@example.test', password: 'drain-password' }),
      });
      await new Promise((r) => setTimeout(r, 30));
      p.kill('SIGTERM');
      assert.equal((await slow).status, 200);
      const code = await new Promise((r) => p.once('exit', r));
      assert.equal(code, 0);
      writeFileSync(join(dir, 'after.txt'), '');
      // The lock is released: a new instance starts.
      const again = run(['user', 'list'], { SERVICE_DATA_DIR: dir });
      assert.equal(again.status, 0);
    } finally {
      p.kill('SIGKILL');
      cleanup();
    }
  });
});
