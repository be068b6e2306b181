// Over 60 s in CI (test-timings.json; issue 37): rclone copies a 1,000-file tree up and down and checks it byte for byte after each copy.
/**
 * rclone's sftp remote against the SFTP gateway: a 1,000-file tree copied up
 * and down, and `rclone check --download` (byte for byte, both ways) after
 * each copy.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { run } from '../helpers/sftp-clients';

const skip = needTool('rclone', 'rclone');

describe('SFTP gateway with rclone', { skip: skip ?? false }, () => {
  let s: TestServer;
  let root: string;
  let local: string;
  let cleanup: () => void;
  let env: Record<string, string>;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-gw-rclone-'));
    mkdirSync(join(root, 'store'));
    local = join(root, 'local');
    for (let i = 0; i < 1000; i++) {
      const dir = join(local, `d${i % 10}`, `e${i % 7}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `f${i}.bin`), randomBytes(i % 50 === 0 ? 200_000 : 1 + (i % 900)));
    }
    s = await startTestServer({ SERVICE_SFTP_LISTEN: '127.0.0.1:0' });
    const admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Box', driver: 'local', config: { path: join(root, 'store') } } })).status,
      200,
    );
    const port = s.server.services.gateways.registry
      .status()
      .gateways.find((x) => x.protocol === 'sftp')!
      .listen!.split(':')
      .at(-1)!;
    const pass = (await run('rclone', ['obscure', ADMIN.password])).stdout.trim();
    env = {
      RCLONE_CONFIG: '/dev/null',
      RCLONE_CONFIG_GW_TYPE: 'sftp',
      RCLONE_CONFIG_GW_HOST: '127.0.0.1',
      RCLONE_CONFIG_GW_PORT: port,
      RCLONE_CONFIG_GW_USER: ADMIN.email,
      RCLONE_CONFIG_GW_PASS: pass,
      // No shell: rclone must not try remote commands for hashes or disk usage.
      RCLONE_CONFIG_GW_SHELL_TYPE: 'none',
      RCLONE_CONFIG_GW_SET_MODTIME: 'false',
    };
  });
  after(async () => {
    await s?.close();
    cleanup();
  });

  test('copy a 1,000-file tree up and down; rclone check --download agrees both ways', async () => {
    const rc = (...args: string[]) =>
      run('rclone', [...args, '--transfers', '8', '--checkers', '8', '--retries', '1', '--low-level-retries', '1'], { env, seconds: 240 });
    let r = await rc('copy', local, 'gw:Box/tree');
    assert.equal(r.code, 0, r.stderr);
    r = await rc('check', '--download', local, 'gw:Box/tree');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /0 differences found/);
    assert.match(r.stderr, /1000 matching files/);
    const back = join(root, 'back');
    r = await rc('copy', 'gw:Box/tree', back);
    assert.equal(r.code, 0, r.stderr);
    r = await rc('check', '--download', 'gw:Box/tree', back);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /1000 matching files/);
    r = await rc('lsf', '--max-depth', '1', 'gw:');
    assert.equal(r.stdout.trim(), 'Box/', 'the root lists the storages');
  });
});
