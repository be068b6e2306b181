/**
 * The gateways' shared core on a real server: sign-in by password (throttled,
 * remembered, refused for a second-factor account) and by API key; the tree
 * with its virtual root, catalogue listings, writes through the write gate
 * with the protocol as origin, exact moves, key roots and read-only keys.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import type { GatewayCore } from '../../server/gateways';
import { kdfLoad } from '../../server/auth/passwords';

const ZED = { email: 'zed@example.test', username: 'zed', password: 'zed-password-1' };
const req = (ip = '127.0.0.1') => ({ ip, ua: 'test' });
const all = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('gateway core', () => {
  let s: TestServer;
  let core: GatewayCore;
  let root: string;
  let cleanup: () => void;
  let admin: string;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-gw-'));
    mkdirSync(join(root, 'docs/sub'), { recursive: true });
    for (let i = 0; i < 25; i++) writeFileSync(join(root, `docs/f${String(i).padStart(2, '0')}.txt`), `file ${i}`);
    s = await startTestServer({ SERVICE_LOGIN_MAX_ATTEMPTS: '3', SERVICE_LOGIN_LOCK: '10s', SERVICE_LIMITS_MAX_UPLOAD_BYTES: '4096' });
    core = s.server.services.gateways;
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } }))
        .status,
      200,
    );
    await s.api('POST', '/api/admin/users', { token: admin, body: { ...ZED, role: 'user' } });
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  test('password sign-in: right, wrong (throttled like the web), remembered, and dropped when the password changes', async () => {
    const a = await core.auth.signIn(ZED.username, ZED.password, req(), 'webdav');
    assert.equal(a.kind, 'person');
    const wrong = await core.auth.signIn(ZED.username, 'nope-nope-1', req('10.1.1.1'), 'webdav').catch((e) => e);
    assert.deepEqual([wrong.code, wrong.params.tries_left], ['invalid_credentials', 2]);
    // Remembered sign-ins cost only their database reads: counted, not timed.
    kdfLoad(true);
    for (let i = 0; i < 20; i++) await core.auth.signIn(ZED.username, ZED.password, req(), 'webdav');
    assert.equal(kdfLoad().peak, 0, 'a remembered password skips the hash');
    const id = (await s.api('GET', '/api/admin/users?q=zed', { token: admin })).body.users[0].id;
    await s.api('PATCH', `/api/admin/users/${id}`, { token: admin, body: { password: 'zed-password-2' } });
    const old = await core.auth.signIn(ZED.username, ZED.password, req('10.1.1.2'), 'webdav').catch((e) => e);
    assert.equal(old.code, 'invalid_credentials', 'the old password stops at once');
    await s.api('PATCH', `/api/admin/users/${id}`, { token: admin, body: { password: ZED.password } });
    const audit = await s.api('GET', '/api/admin/audit?action=auth.login', { token: admin });
    assert.ok(audit.body.events.some((e: any) => e.meta.kind === 'webdav'));
    // A remembered password waits out a lock like any other.
    await core.auth.signIn(ZED.username, ZED.password, req(), 'webdav');
    for (let i = 0; i < 3; i++) await core.auth.signIn(ZED.username, `bad-${i}-pass`, req('10.1.1.3'), 'webdav').catch(() => undefined);
    assert.equal((await core.auth.signIn(ZED.username, ZED.password, req(), 'webdav').catch((e) => e)).code, 'rate_limited');
    // The lock (10 s: at load 30 three sign-ins outlasted a 2 s window) ends by itself before the next test signs in.
    const end = Date.now() + 60_000;
    while ((await core.auth.signIn(ZED.username, ZED.password, req(), 'webdav').catch((e) => e))?.code === 'rate_limited') {
      assert.ok(Date.now() < end, 'the lock ends');
      await new Promise((r) => setTimeout(r, 500));
    }
  });

  test('API keys sign in as the password (any user name); a bad key is refused; an account with a second factor needs a key', async () => {
    const zed = await s.login(ZED.email, ZED.password);
    const made = await s.api('POST', '/api/auth/keys', { token: zed, body: { name: 'dav', verbs: ['files:read'], root: '/Box/docs' } });
    const a = await core.auth.signIn('anything', made.body.token, req(), 'sftp');
    assert.equal(a.kind, 'key');
    assert.equal((await core.auth.signIn('x', made.body.token.slice(0, -2) + 'zz', req(), 'sftp').catch((e) => e)).code, 'unauthenticated');
    const s3 = await core.auth.s3Key(made.body.s3.access_key_id, req());
    assert.equal(s3?.secret, made.body.s3.secret_access_key);
    assert.equal(await core.auth.s3Key('fdk_999999', req()), null);
    // An access key id is guessable: a lookup records no use until the caller says the signature held.
    const k2 = (await s.api('POST', '/api/auth/keys', { token: zed, body: { name: 's3', verbs: ['files:read'] } })).body;
    const found = await core.auth.s3Key(k2.s3.access_key_id, req('10.3.3.3'));
    const lastUsed = async () => (await s.api('GET', '/api/auth/keys', { token: zed })).body.keys.find((k: any) => k.id === k2.key.id).last_used_at;
    assert.equal(await lastUsed(), null);
    found?.used();
    // The use is recorded off the request's path: poll for it.
    for (let i = 0; i < 100 && (await lastUsed()) === null; i++) await new Promise((r) => setTimeout(r, 50));
    assert.notEqual(await lastUsed(), null);
    // Remembered before the enrolment: the refusal below must not be skipped by it.
    assert.equal((await core.auth.signIn(ZED.email, ZED.password, req('10.2.2.3'), 'ftp')).kind, 'person');
    // Enrol TOTP, then the password no longer opens a gateway.
    const setup = await s.api('POST', '/api/auth/mfa/totp/setup', { token: zed, body: { current_password: ZED.password } });
    const { TOTP, Secret } = await import('otpauth');
    await s.api('POST', '/api/auth/mfa/totp/confirm', { token: zed, body: { code: TOTP.generate({ secret: Secret.fromBase32(setup.body.secret) }) } });
    const refused = await core.auth.signIn(ZED.email, ZED.password, req('10.2.2.2'), 'ftp').catch((e) => e);
    assert.deepEqual([refused.code, refused.details?.reason], ['forbidden', 'use_api_key']);
  });

  test("writes keep the web upload's rules: the size limit and the owner's quota, declared or streamed; nothing is left", async () => {
    const big = () => Readable.from([Buffer.alloc(3000, 1), Buffer.alloc(3000, 2)]);
    const t = core.tree(await core.auth.signIn(ADMIN.email, ADMIN.password, req(), 'sftp'), 'sftp');
    assert.equal((await t.write('/Box/docs/big.bin', big()).catch((e) => e)).code, 'payload_too_large');
    assert.equal((await t.write('/Box/docs/big.bin', big(), { size: 6000 }).catch((e) => e)).code, 'payload_too_large');
    const id = (await s.api('GET', '/api/admin/users?q=zed', { token: admin })).body.users[0].id;
    await s.api('PATCH', `/api/admin/users/${id}`, { token: admin, body: { quota_bytes: 10 } });
    const key = (await s.api('POST', `/api/admin/users/${id}/keys`, { token: admin, body: { name: 'q', verbs: ['files:read', 'files:write'] } })).body.token;
    const z = core.tree(await core.auth.signIn('zed', key, req(), 's3'), 's3');
    assert.equal((await z.write('/Box/docs/q.bin', Readable.from([Buffer.alloc(1000)])).catch((e) => e)).code, 'quota_exceeded');
    assert.equal((await z.write('/Box/docs/q.bin', Readable.from([Buffer.alloc(1000)]), { size: 1000 }).catch((e) => e)).code, 'quota_exceeded');
    assert.equal(existsSync(join(root, 'docs/big.bin')) || existsSync(join(root, 'docs/q.bin')), false);
    await s.api('PATCH', `/api/admin/users/${id}`, { token: admin, body: { quota_bytes: null } });
  });

  test('the tree: / lists storages, folders stream from the catalogue, writes go through the gate with the protocol as origin', async () => {
    const a = await core.auth.signIn(ADMIN.email, ADMIN.password, req(), 'webdav');
    const t = core.tree(a, 'webdav');
    assert.deepEqual(
      (await all(t.list('/'))).map((e) => e.name),
      ['Box'],
    );
    assert.equal((await t.stat('/')).type, 'dir');
    assert.equal((await t.stat('/Box')).type, 'dir');
    const docs = await all(t.files.entries('/Box/docs', 10));
    assert.equal(docs.length, 26, 'three pages of ten, folders first');
    assert.equal(docs[0].name, 'sub');
    const events: any[] = [];
    s.server.bus.on('file.uploaded', (e) => void events.push(e));
    await t.write('/Box/docs/new.txt', Readable.from([Buffer.from('hello')]), { size: 5 });
    assert.equal(readFileSync(join(root, 'docs/new.txt'), 'utf8'), 'hello');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(events.at(-1)?.meta.origin, 'webdav');
    // A body that fails mid-way leaves nothing behind.
    const broken = new Readable({
      read() {
        this.push(Buffer.from('partial'));
        this.destroy(new Error('client gone'));
      },
    });
    await assert.rejects(t.write('/Box/docs/broken.txt', broken));
    assert.equal(existsSync(join(root, 'docs/broken.txt')), false);
  });

  test("before a storage's first sync ends, a folder known only from a deeper folder's check is listed whole", async () => {
    const { dir: fresh, cleanup: gone } = tempDir('filedock-gw-fresh-');
    try {
      mkdirSync(join(fresh, 'deep/er'), { recursive: true });
      mkdirSync(join(fresh, 'empty'));
      writeFileSync(join(fresh, 'top.txt'), 'top');
      // The first sync waits in the paused queue: only listings catalogue the tree.
      s.server.queue.setPaused(true);
      assert.equal(
        (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Fresh', driver: 'local', config: { path: fresh } } }))
          .status,
        200,
      );
      const t = core.tree(await core.auth.signIn(ADMIN.email, ADMIN.password, req(), 'webdav'), 'webdav');
      assert.deepEqual(
        (await all(t.files.entries('/Fresh/deep/er'))).map((e) => e.name),
        [],
      );
      // Checking deep/er put `deep` into the root's rows; the root itself was never listed.
      assert.deepEqual(
        (await all(t.files.entries('/Fresh'))).map((e) => e.name),
        ['deep', 'empty', 'top.txt'],
      );
    } finally {
      s.server.queue.setPaused(false);
      gone();
    }
  });

  test('exact moves: onto a free path, refused onto a taken one, replacing a folder only with overwrite', async () => {
    const t = core.tree(await core.auth.signIn(ADMIN.email, ADMIN.password, req(), 'sftp'), 'sftp');
    await t.mkdir('/Box/m');
    await t.write('/Box/m/a.txt', Readable.from([Buffer.from('a')]));
    await t.mkdir('/Box/m/dir');
    await t.move('/Box/m/a.txt', '/Box/m/b.txt', false);
    assert.ok(existsSync(join(root, 'm/b.txt')) && !existsSync(join(root, 'm/a.txt')));
    const taken = await t.move('/Box/m/b.txt', '/Box/m/dir', false).catch((e) => e);
    assert.equal(taken.code, 'conflict', 'not moved into the folder');
    await t.move('/Box/m/b.txt', '/Box/m/dir', true);
    assert.equal(readFileSync(join(root, 'm/dir'), 'utf8'), 'a', 'the folder went to the trash, the file took its name');
    await t.copy('/Box/m/dir', '/Box/m/c.txt', false);
    assert.equal(readFileSync(join(root, 'm/c.txt'), 'utf8'), 'a');
  });

  test('a key confined to a folder, read-only: the way down lists only the next folder; writes and siblings are refused', async () => {
    const made = await s.api('POST', '/api/auth/keys', { token: admin, body: { name: 'ro', verbs: ['files:read'], root: '/Box/docs/sub' } });
    const t = core.tree(await core.auth.signIn('', made.body.token, req(), 'ftp'), 'ftp');
    assert.deepEqual(
      (await all(t.list('/'))).map((e) => e.name),
      ['Box'],
    );
    assert.deepEqual(
      (await all(t.list('/Box'))).map((e) => e.name),
      ['docs'],
    );
    assert.deepEqual(
      (await all(t.list('/Box/docs'))).map((e) => e.name),
      ['sub'],
    );
    assert.equal((await t.stat('/Box/docs')).type, 'dir');
    const write = await t.write('/Box/docs/sub/x.txt', Readable.from([Buffer.from('x')])).catch((e) => e);
    assert.deepEqual([write.code, write.details?.source], ['permission_denied', 'key']);
    const sibling = await t.open('/Box/docs/f01.txt').catch((e) => e);
    assert.deepEqual([sibling.code, sibling.details?.source], ['permission_denied', 'key_root']);
  });

  test('the admin route reports listeners and sessions', async () => {
    core.registry.listener({ protocol: 'sftp', enabled: true, listen: '127.0.0.1:2222', url: 'sftp://127.0.0.1:2222', error: null });
    const close = core.registry.open('sftp', 'zed@example.test', '10.0.0.9');
    core.registry.touch('webdav', 'admin@example.test', '127.0.0.1');
    const r = await s.api('GET', '/api/admin/gateways', { token: admin });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.gateways.map((g: any) => [g.protocol, g.enabled]),
      [
        ['webdav', true],
        ['sftp', true],
        ['ftp', false],
        ['s3', false],
        ['nfs', false],
      ],
    );
    assert.deepEqual(r.body.sessions.map((x: any) => x.protocol).sort(), ['sftp', 'webdav']);
    close();
    assert.equal((await s.api('GET', '/api/admin/gateways', { token: admin })).body.sessions.length, 1);
  });
});
