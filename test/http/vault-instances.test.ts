/**
 * Two instances on one PostgreSQL agree on who may open an encrypted folder (docs/vault.md, "How the server
 * enforces it"): a member added through A lists the folder through B, and once removed through A, B refuses
 * them (the change notice; at worst the 30 s re-read).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHILD_ADMIN as ADMIN, callJson as api, instanceEnv, spawnServer, type ChildServer } from '../helpers/child-server';
import { tempDir } from '../helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { b64u, vaultBody } from '../helpers/vault';

const skip = needPostgres();
describe('encrypted folders across two instances', { skip: skip ?? false, timeout: 300_000 }, () => {
  let cluster: PgCluster;
  const tmp = tempDir('filedock-vault-two-');
  const running: ChildServer[] = [];

  before(async () => {
    cluster = await startPostgres();
    const url = await cluster.createDatabase('vault');
    const keyFile = join(tmp.dir, 'filedock.key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    mkdirSync(join(tmp.dir, 'files'));
    for (const name of ['a', 'b']) running.push(await spawnServer(instanceEnv({ url, keyFile, dataDir: join(tmp.dir, name), files: join(tmp.dir, 'files') })));
  });
  after(async () => {
    for (const s of running) await s.stop().catch(() => {});
    await cluster?.destroy();
    tmp.cleanup();
  });

  /** Polls `fn` until it is true, for up to 10 s (the notice normally arrives within milliseconds). */
  const eventually = async (fn: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 200; i++) {
      if (await fn()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(what);
  };

  test('a member added through A opens the folder through B; removed through A, B refuses them', async () => {
    const [a, b] = running.map((s) => s.url);
    const admin = (await api(a, 'POST', '/api/auth/login', undefined, { email: ADMIN.email, password: ADMIN.password })).body.token;
    const ids: Record<string, number> = {};
    const tokens: Record<string, string> = {};
    for (const n of ['alice', 'bob']) {
      const u = await api(a, 'POST', '/api/admin/users', admin, { email: `${n}@example.test`, username: n, password: 'person-pass-123' });
      assert.equal(u.status, 200, JSON.stringify(u.body));
      ids[n] = u.body.user.id;
      tokens[n] = (await api(a, 'POST', '/api/auth/login', undefined, { email: `${n}@example.test`, password: 'person-pass-123' })).body.token;
      assert.equal((await api(a, 'PUT', '/api/vault', tokens[n], vaultBody().body)).status, 201);
    }
    const home = (await api(a, 'GET', '/api/auth/me', tokens.alice)).body.user.home as string;
    const made = await api(a, 'POST', '/api/vault/folders', tokens.alice, { path: `${home}/Vault` });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = made.body.folder.id;
    const set = (version: number, members: number[]) =>
      api(a, 'PUT', `/api/vault/folders/${id}/members`, tokens.alice, {
        key_version: version,
        members: members.map((user_id) => ({ user_id, wrapped_key: b64u(125) })),
      });
    const bobOnB = () => api(b, 'GET', `/api/files/manager?path=${encodeURIComponent(`${home}/Vault`)}`, tokens.bob);
    const adminOnB = await api(b, 'GET', `/api/files/manager?path=${encodeURIComponent(`${home}/Vault`)}`, admin);
    assert.equal(adminOnB.body.error, 'encrypted', 'B knows the folder is encrypted');

    assert.equal((await set(1, [ids.alice, ids.bob])).status, 200);
    await eventually(async () => (await bobOnB()).status === 200, 'B let the new member in');
    assert.equal((await set(2, [ids.alice])).status, 200);
    await eventually(async () => (await bobOnB()).body.error === 'encrypted', 'B shut out the removed member');
  });
});
