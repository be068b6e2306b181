import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DEFAULT_TENANT, openDatabase } from '../db';
import { tempDir } from '../../test/helpers/tools';
import { Sessions, CACHE_MAX } from './sessions';
import { UsersRepo } from './users.repo';

test('the principal cache is keyed by token, bounded, and forgets a revoked session at once', async () => {
  const t = tempDir('filedock-sessions-');
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  try {
    const users = new UsersRepo(db);
    await users.insert(DEFAULT_TENANT, { email: 'a@example.test', username: 'a', role: 'user', password_hash: 'x' });
    const sessions = new Sessions(db, users, randomBytes(32), 3_600_000);
    const rows = [];
    for (let i = 0; i < CACHE_MAX + 50; i++) rows.push(await sessions.insert(DEFAULT_TENANT, 1, {}));
    const tokens = await Promise.all(rows.map((r) => sessions.sign(r)));
    for (const s of tokens) assert.equal((await sessions.resolve(DEFAULT_TENANT, s.token))?.id, 1);
    assert.equal(sessions.cached, CACHE_MAX, 'the oldest entries went');
    // A cached token is refused as soon as its session is revoked.
    const last = tokens[tokens.length - 1];
    assert.ok(await sessions.resolve(DEFAULT_TENANT, last.token));
    // What authentication answers without an await: the cached principal, only while it is cached.
    assert.equal(sessions.recent(DEFAULT_TENANT, last.token)?.id, 1);
    assert.equal(sessions.recent(DEFAULT_TENANT, tokens[0].token), undefined, 'an entry the bound pushed out');
    // A cached token asked for in another tenant (a cookie replayed on another tenant's host) is no session there.
    assert.equal(sessions.recent({ tenant_id: 2 }, last.token), null);
    assert.equal(await sessions.resolve({ tenant_id: 2 }, last.token), null);
    assert.ok(await sessions.resolve(DEFAULT_TENANT, last.token), 'still its own tenant’s');
    await sessions.revoke(DEFAULT_TENANT, last.sid);
    assert.equal(sessions.recent(DEFAULT_TENANT, last.token), undefined);
    assert.equal(await sessions.resolve(DEFAULT_TENANT, last.token), null);
    // A forged token never reaches the cache.
    assert.equal(await sessions.resolve(DEFAULT_TENANT, last.token.slice(0, -2) + 'xx'), null);
  } finally {
    void db.close();
    t.cleanup();
  }
});
