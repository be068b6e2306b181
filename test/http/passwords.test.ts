/**
 * Password hashing as sign-in meets it: hashes from the former scrypt N=2^15
 * are replaced at the next right password (and only then), and concurrent
 * sign-ins never run more than two hashes at once (docs/auth.md, "Passwords").
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { startTestServer, ADMIN, type TestServer } from '../helpers/server';
import { DEFAULT_COST, kdfLoad, verifyPassword } from '../../server/auth/passwords';
import { DEFAULT_TENANT } from '../../server/db';

/** A hash as the earlier release stored it: `scrypt$32768$8$1$salt$key`. */
function oldHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFKC'), salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${2 ** 15}$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

describe('password hashes', () => {
  let s: TestServer;
  let admin: string;
  before(async () => {
    // The default cost (the test runner lowers it for every other suite: scripts/test.mjs).
    s = await startTestServer({ SERVICE_PASSWORD_COST: String(DEFAULT_COST) });
    admin = await s.login();
  });
  after(() => s.close());

  /** An account whose stored hash comes from the earlier parameters. */
  async function legacyUser(email: string, password: string): Promise<{ id: number; hash: string }> {
    const r = await s.api('POST', '/api/admin/users', { token: admin, body: { email, password, role: 'user' } });
    assert.equal(r.status, 200);
    const hash = oldHash(password);
    await s.server.auth.repo.update(DEFAULT_TENANT, r.body.user.id, { password_hash: hash });
    return { id: r.body.user.id, hash };
  }
  const stored = async (id: number) => (await s.server.auth.repo.byId(DEFAULT_TENANT, id))!.password_hash!;

  test('new hashes use N=2^17, r=8, p=1', async () => {
    assert.match(await stored((await s.server.auth.repo.byLogin(DEFAULT_TENANT, ADMIN.email))!.id), /^scrypt\$131072\$8\$1\$/);
  });

  test('a right password over an old hash signs in and leaves a N=2^17 hash that still verifies', async () => {
    const u = await legacyUser('old@example.test', 'old-password-1');
    const r = await s.api('POST', '/api/auth/login', { body: { email: 'old@example.test', password: 'old-password-1' } });
    assert.equal(r.status, 200);
    const now = await stored(u.id);
    assert.notEqual(now, u.hash);
    assert.match(now, /^scrypt\$131072\$8\$1\$/);
    assert.equal(await verifyPassword('old-password-1', now), true);
    assert.equal(await verifyPassword('old-password-2', now), false);
    assert.equal((await s.api('POST', '/api/auth/login', { body: { email: 'old@example.test', password: 'old-password-1' } })).status, 200);
    assert.equal(await stored(u.id), now, 'a current hash is not replaced again');
  });

  test('a wrong password does not rehash', async () => {
    const u = await legacyUser('old2@example.test', 'old-password-2');
    const r = await s.api('POST', '/api/auth/login', { body: { email: 'old2@example.test', password: 'not-the-password' } });
    assert.equal(r.status, 401);
    assert.equal(await stored(u.id), u.hash);
  });

  test('six concurrent sign-ins run at most two hashes at once, and all succeed', async () => {
    kdfLoad(true);
    const all = await Promise.all(Array.from({ length: 6 }, () => s.api('POST', '/api/auth/login', { body: ADMIN })));
    assert.deepEqual(
      all.map((r) => r.status),
      [200, 200, 200, 200, 200, 200],
    );
    assert.equal(kdfLoad().peak, 2);
    assert.equal(kdfLoad().running, 0);
  });
});
