import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/helpers/tools';
import { ServerHost } from './server-host';
import { buildServerEnv, FirstRunMarker } from './server-env';
import { DeviceKeyStore, machineId, pairWithSession, signIn, bootstrap } from './pairing';
import { DEFAULT_SETTINGS } from './desktop-settings';
import { forkServer, realServer, serverEnv, TEST_READY_MS } from './fixtures/server-process';

describe(`first run and pairing against the ${realServer ? 'real server' : 'protocol stand-in'}`, () => {
  const tmp = tempDir('filedock-pair-');
  const userData = join(tmp.dir, 'userData');
  const home = join(tmp.dir, 'home');
  const marker = new FirstRunMarker(userData, home);
  const keys = new DeviceKeyStore(join(userData, 'device-key'));
  const id = machineId(join(userData, 'machine-id'), join(tmp.dir, 'no-such-machine-id'));
  let firstRun = marker.begin();
  const host = new ServerHost({
    fork: forkServer,
    // The test's minimal base env keeps the run hermetic; the shell passes process.env.
    env: () =>
      buildServerEnv({
        settings: { ...DEFAULT_SETTINGS, port: 0, lanAccess: false },
        dataDir: join(userData, 'data'),
        firstRun,
        base: serverEnv(join(userData, 'data')),
      }),
    backoffBaseMs: 50,
    readyTimeoutMs: TEST_READY_MS,
  });
  let base = '';
  const me = async (token: string) => fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });

  before(async () => {
    const { port } = await host.start();
    base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await host.stop();
    tmp.cleanup();
  });

  test('first run: ~/Filedock exists, the owner is an admin, signed in through the bootstrap secret, and the machine is paired', async () => {
    assert.ok(firstRun);
    assert.ok(statSync(join(home, 'Filedock')).isDirectory());
    const out = await signIn({ baseUrl: base, machineId: id, label: 'Test desktop', keys, bootstrapSecret: firstRun.secret });
    assert.ok(out.via === 'bootstrap', out.via);
    assert.equal(out.login.user.role, 'admin');
    const res = await me(out.login.token);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { user: { username: string } }).user.username, 'owner');
    assert.ok(keys.load()?.key, 'the device key is stored');
    assert.equal(statSync(keys.path).mode & 0o777, 0o600);
    marker.finish();
    assert.equal(marker.begin(), null, 'no second first run');
  });

  test('the bootstrap secret works only once', async () => {
    await assert.rejects(bootstrap(base, firstRun!.secret), (e: { status: number }) => e.status === 401);
  });

  test('every later launch signs in with the device key; restarting the server keeps it valid', async () => {
    firstRun = marker.begin();
    assert.equal(firstRun, null);
    const { port } = await host.restart();
    base = `http://127.0.0.1:${port}`;
    const out = await signIn({ baseUrl: base, machineId: id, label: 'Test desktop', keys, bootstrapSecret: null });
    assert.ok(out.via === 'key', out.via);
    assert.equal((await me(out.login.token)).status, 200);
  });

  test('the key is bound to this machine', async () => {
    const other = new DeviceKeyStore(join(tmp.dir, 'copied-key'));
    other.save(keys.load()!);
    const out = await signIn({ baseUrl: base, machineId: 'another-machine-0000', label: 'x', keys: other, bootstrapSecret: null });
    assert.equal(out.via, 'none');
    assert.equal(other.load(), null, 'a rejected key is forgotten');
  });

  test('a revoked key stops working at once; signing in again with a session pairs anew', async () => {
    const first = await signIn({ baseUrl: base, machineId: id, label: 'Test desktop', keys, bootstrapSecret: null });
    assert.ok(first.via === 'key', first.via);
    const token = first.login.token;
    const list = (await (await fetch(`${base}/api/auth/desktop/keys`, { headers: { authorization: `Bearer ${token}` } })).json()) as
      | { keys?: { id: number }[] }
      | { id: number }[];
    const rows = Array.isArray(list) ? list : (list.keys ?? []);
    assert.ok(rows.length >= 1);
    const del = await fetch(`${base}/api/auth/desktop/keys/${keys.load()!.key_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    assert.ok(del.status === 200 || del.status === 204, `revoke answered ${del.status}`);
    const after = await signIn({ baseUrl: base, machineId: id, label: 'Test desktop', keys, bootstrapSecret: null });
    assert.deepEqual(after, { via: 'none', reason: 'the device key was revoked' });
    assert.equal(existsSync(keys.path), false);
    // The user signs in with a password in the window; its session pairs the machine again.
    await pairWithSession(base, token, { machineId: id, label: 'Test desktop', keys });
    assert.equal((await signIn({ baseUrl: base, machineId: id, label: 'Test desktop', keys, bootstrapSecret: null })).via, 'key');
  });
});

test('machineId is stable, hashed, and falls back to a persisted random id', () => {
  const tmp = tempDir('filedock-mid-');
  try {
    const a = machineId(join(tmp.dir, 'mid'), join(tmp.dir, 'missing'));
    assert.match(a, /^[0-9a-f]{32}$/);
    assert.equal(machineId(join(tmp.dir, 'mid'), join(tmp.dir, 'missing')), a);
    assert.notEqual(machineId(join(tmp.dir, 'mid2'), join(tmp.dir, 'missing')), a);
  } finally {
    tmp.cleanup();
  }
});
