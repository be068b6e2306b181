/**
 * The vault's routes on a real server (docs/vault.md, "Server"): a person's vault, proofs compared and
 * throttled, encrypted folders and their member sets (owner only, `current + 1`, the caller included, members
 * with a vault), members-only access (admins included), and what refuses bad input.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { b64u, makeVault, vaultBody } from '../helpers/vault';

describe('the vault and encrypted folders', () => {
  let s: TestServer;
  let admin: string;
  let cleanupRoot: () => void;
  const people: Record<string, { id: number; token: string }> = {};
  const addUser = async (name: string) => {
    const r = await s.api('POST', '/api/admin/users', { token: admin, body: { email: `${name}@example.test`, username: name, password: 'person-pass-123' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    people[name] = { id: r.body.user.id, token: await s.login(`${name}@example.test`, 'person-pass-123') };
  };
  const list = (token: string, path: string) => s.api('GET', `/api/files/manager?path=${encodeURIComponent(path)}`, { token });
  const members = (ids: number[]) => ids.map((user_id) => ({ user_id, wrapped_key: b64u(125) }));

  before(async () => {
    let root: string;
    ({ dir: root, cleanup: cleanupRoot } = tempDir('filedock-vault-'));
    s = await startTestServer({
      SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
      SERVICE_DEFAULT_STORAGE_NAME: 'Files',
      SERVICE_DEFAULT_STORAGE_PATH: root,
      SERVICE_LOGIN_MAX_ATTEMPTS: '3',
    });
    admin = await s.login();
    for (const n of ['alice', 'bob', 'carol', 'dave']) await addUser(n);
  });
  after(async () => {
    await s?.close();
    cleanupRoot?.();
  });

  test('a vault is set up once, read back without its proofs, and refused a second time', async () => {
    const { alice } = people;
    assert.deepEqual((await s.api('GET', '/api/vault', { token: alice.token })).body, { vault: null });
    const v = vaultBody();
    const r = await s.api('PUT', '/api/vault', { token: alice.token, body: v.body });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const got = (await s.api('GET', '/api/vault', { token: alice.token })).body.vault;
    assert.deepEqual(got.kdf, v.body.kdf);
    assert.equal(got.public_key, v.body.public_key);
    assert.equal(got.auth, undefined);
    assert.equal(JSON.stringify(got).includes(v.auth), false, 'the proof is never given back');
    const again = await s.api('PUT', '/api/vault', { token: alice.token, body: vaultBody().body });
    assert.equal(again.status, 409);
    assert.equal((await s.api('GET', '/api/vault', { token: alice.token })).body.vault.public_key, v.body.public_key);
  });

  test('malformed b64u, wrong sizes and weak KDF parameters are refused and nothing is stored', async () => {
    const { carol } = people;
    const bad = [
      { auth: 'not+base64url/' },
      { public_key: b64u(33) },
      { auth: b64u(31) },
      { kdf: { alg: 'argon2id', m: 65536, t: 0, p: 1, salt: b64u(16) } },
      { kdf: { alg: 'pbkdf2', m: 65536, t: 3, p: 1, salt: b64u(16) } },
      { extra: 1 },
    ];
    for (const patch of bad) {
      const r = await s.api('PUT', '/api/vault', { token: carol.token, body: { ...vaultBody().body, ...patch } });
      assert.equal(r.status, 400, JSON.stringify(patch));
      assert.equal(r.body.error, 'validation_failed');
    }
    assert.deepEqual((await s.api('GET', '/api/vault', { token: carol.token })).body, { vault: null });
  });

  test('a passphrase change needs the old proof; wrong proofs answer vault_auth_failed, then the throttle', async () => {
    const { bob } = people;
    const v = await makeVault(s, bob.token);
    const change = (auth: string, new_auth = b64u(32)) =>
      s.api('POST', '/api/vault/passphrase', {
        token: bob.token,
        body: { auth, kdf: { alg: 'argon2id', m: 65536, t: 3, p: 1, salt: b64u(16) }, wrapped_private_key: b64u(166), new_auth },
      });
    const next = b64u(32);
    assert.equal((await change(v.auth, next)).status, 204);
    const old = await change(v.auth);
    assert.equal(old.status, 403);
    assert.equal(old.body.error, 'vault_auth_failed');
    // The recovery key resets it.
    const recovered = b64u(32);
    const rec = (recovery_auth: string) =>
      s.api('POST', '/api/vault/recover', {
        token: bob.token,
        body: { recovery_auth, kdf: { alg: 'argon2id', m: 65536, t: 3, p: 1, salt: b64u(16) }, wrapped_private_key: b64u(166), new_auth: recovered },
      });
    assert.equal((await rec(b64u(32))).body.error, 'vault_auth_failed');
    assert.equal((await rec(v.recovery_auth)).status, 204);
    assert.equal((await change(next)).status, 403, 'the recovery replaced the passphrase proof');
    // Three wrong proofs in a row (the login limit here) lock the person out for a while, even with the right one.
    await change(b64u(32));
    await change(b64u(32));
    const locked = await change(recovered);
    assert.equal(locked.status, 429);
    assert.equal(locked.body.error, 'rate_limited');
  });

  test('people lists others with a vault to share with', async () => {
    const { alice, bob, carol } = people;
    const r = await s.api('GET', '/api/vault/people', { token: alice.token });
    assert.equal(r.status, 200);
    const ids = r.body.people.map((p: { id: number }) => p.id);
    assert.ok(ids.includes(bob.id));
    assert.ok(!ids.includes(alice.id), 'not the caller');
    assert.ok(!ids.includes(carol.id), 'not a person without a vault');
    assert.equal(r.body.people.find((p: { id: number }) => p.id === bob.id).public_key.length, 87);
    assert.deepEqual((await s.api('GET', '/api/vault/people?q=nobody', { token: alice.token })).body.people, []);
  });

  test('an encrypted folder: made at version 0, keys at current + 1 only, members with a vault, the caller included', async () => {
    const { alice, bob, carol } = people;
    const made = await s.api('POST', '/api/vault/folders', { token: alice.token, body: { path: '/Files/Users/alice/Secret' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const f = made.body.folder;
    assert.deepEqual([f.path, f.key_version, f.owner.id, f.keys], ['/Files/Users/alice/Secret', 0, alice.id, []]);
    const put = (token: string, body: unknown) => s.api('PUT', `/api/vault/folders/${f.id}/members`, { token, body });

    assert.equal((await put(alice.token, { key_version: 1, members: members([bob.id]) })).status, 400, 'a set without the caller');
    const noVault = await put(alice.token, { key_version: 1, members: members([alice.id, carol.id]) });
    assert.equal(noVault.status, 400);
    assert.deepEqual(noVault.body.details.without_vault, [carol.id]);
    assert.equal((await put(alice.token, { key_version: 1, members: [{ user_id: alice.id, wrapped_key: b64u(124) }] })).status, 400, 'a short wrapped key');
    assert.equal((await put(alice.token, { key_version: 2, members: members([alice.id]) })).status, 409, 'not current + 1');

    const v1 = await put(alice.token, { key_version: 1, members: members([alice.id]) });
    assert.equal(v1.status, 200, JSON.stringify(v1.body));
    assert.equal(v1.body.folder.key_version, 1);
    assert.deepEqual(
      v1.body.folder.keys.map((k: { version: number }) => k.version),
      [1],
    );
    const replay = await put(alice.token, { key_version: 1, members: members([alice.id]) });
    assert.equal(replay.status, 409, 'a replayed old version');
    assert.equal(replay.body.details.expected, 2);

    const again = await s.api('POST', '/api/vault/folders', { token: alice.token, body: { path: '/Files/Users/alice/Secret' } });
    assert.equal(again.status, 409);
    const noVaultFolder = await s.api('POST', '/api/vault/folders', { token: carol.token, body: { path: '/Files/Users/carol/Mine' } });
    assert.equal(noVaultFolder.status, 409, 'a person without a vault cannot make one');
  });

  test('members only: admins and others get 403 encrypted; a member added gets access, a member removed loses it', async () => {
    const { alice, bob, dave } = people;
    const f = (await s.api('GET', '/api/vault/folders', { token: alice.token })).body.folders.find(
      (x: { path: string }) => x.path === '/Files/Users/alice/Secret',
    );
    assert.ok(f);
    assert.equal((await list(alice.token, '/Files/Users/alice/Secret')).status, 200);
    const byAdmin = await list(admin, '/Files/Users/alice/Secret');
    assert.equal(byAdmin.status, 403);
    assert.equal(byAdmin.body.error, 'encrypted');
    assert.equal((await s.api('GET', `/api/vault/folders/${f.id}`, { token: admin })).status, 404);
    // The parent's listing marks the root.
    const parent = await list(alice.token, '/Files/Users/alice');
    const row = parent.body.entries.find((e: { name: string }) => e.name === 'Secret');
    assert.deepEqual([row.encrypted, row.vault_folder_id], [true, f.id]);

    // Bob has no access to alice's home; membership is his way in.
    const before = await list(bob.token, '/Files/Users/alice/Secret');
    assert.deepEqual([before.status, before.body.error], [403, 'encrypted']);
    assert.equal((await list(bob.token, '/Files/Users/alice')).status, 403);
    const v2 = await s.api('PUT', `/api/vault/folders/${f.id}/members`, { token: alice.token, body: { key_version: 2, members: members([alice.id, bob.id]) } });
    assert.equal(v2.status, 200, JSON.stringify(v2.body));
    assert.deepEqual(
      v2.body.folder.members.map((m: { id: number }) => m.id),
      [alice.id, bob.id].sort((a, b) => a - b),
    );
    assert.equal((await list(bob.token, '/Files/Users/alice/Secret')).status, 200);
    const bobs = await s.api('GET', `/api/vault/folders/${f.id}`, { token: bob.token });
    assert.deepEqual(
      bobs.body.folder.keys.map((k: { version: number }) => k.version),
      [2],
      'a person added later holds only the new version',
    );
    // A member who is not the owner cannot change the set.
    const byBob = await s.api('PUT', `/api/vault/folders/${f.id}/members`, { token: bob.token, body: { key_version: 3, members: members([bob.id]) } });
    assert.equal(byBob.status, 403);
    assert.equal((await list(dave.token, '/Files/Users/alice/Secret')).body.error, 'encrypted');

    const v3 = await s.api('PUT', `/api/vault/folders/${f.id}/members`, { token: alice.token, body: { key_version: 3, members: members([alice.id]) } });
    assert.equal(v3.status, 200);
    assert.equal((await list(bob.token, '/Files/Users/alice/Secret')).body.error, 'encrypted', 'his way in went with his membership');
    assert.equal((await s.api('GET', `/api/vault/folders/${f.id}`, { token: bob.token })).status, 404);
    const mine = await s.api('GET', `/api/vault/folders/${f.id}`, { token: alice.token });
    assert.deepEqual(
      mine.body.folder.keys.map((k: { version: number }) => k.version),
      [1, 2, 3],
    );
  });

  test('API keys cannot manage a vault', async () => {
    const { alice } = people;
    const k = await s.api('POST', '/api/auth/keys', { token: alice.token, body: { name: 'k', verbs: ['files:read', 'files:write'] } });
    assert.equal(k.status, 201, JSON.stringify(k.body));
    const r = await s.api('GET', '/api/vault', { token: k.body.token });
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'session_required');
  });
});
