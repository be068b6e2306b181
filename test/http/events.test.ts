import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createHmac } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { sqlValue } from '../helpers/sql';
import { DEFAULT_TENANT } from '../../server/db';

describe('events out: webhook admin API with signed deliveries, legacy URL, the bell routes', () => {
  let s: TestServer;
  let admin: string;
  let user: string;
  let hook: Server;
  let hookUrl: string;
  let cleanup: () => void;
  const got: Array<{ headers: IncomingMessage['headers']; body: string; path: string }> = [];

  before(async () => {
    let root;
    ({ dir: root, cleanup } = tempDir('filedock-ev-'));
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        got.push({ headers: req.headers, body, path: req.url! });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
    hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}`;
    s = await startTestServer();
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Docs', driver: 'local', config: { path: root } } }))
        .status,
      200,
    );
    await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'u@example.test', username: 'u1', password: 'user-password-1' } });
    user = await s.login('u@example.test', 'user-password-1');
  });
  after(async () => {
    await s.close();
    await new Promise((r) => hook.close(r));
    cleanup();
  });

  const waitFor = async (n: number) => {
    for (let i = 0; i < 200 && got.length < n; i++) await new Promise((r) => setTimeout(r, 25));
  };

  test('a target gets its key once, reads back ***; an upload reaches it signed; the delivery log records it', async () => {
    const created = await s.api('POST', '/api/admin/webhooks', { token: admin, body: { url: `${hookUrl}/t1`, events: ['file.uploaded'] } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const key = created.body.secret as string;
    assert.ok(key.length >= 32);
    const list = await s.api('GET', '/api/admin/webhooks', { token: admin });
    assert.deepEqual(
      list.body.targets.map((t: any) => [t.url, t.secret]),
      [[`${hookUrl}/t1`, '***']],
    );
    assert.equal((await s.api('POST', '/api/admin/webhooks', { token: admin, body: { url: 'ftp://x' } })).status, 400);
    assert.equal((await s.api('POST', '/api/admin/webhooks', { token: admin, body: { url: `${hookUrl}/x`, events: ['audit'] } })).status, 400);
    assert.equal((await s.api('GET', '/api/admin/webhooks', { token: user })).status, 403);
    await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/hello.txt', content: 'hi' } });
    await waitFor(1);
    assert.equal(got.length, 1);
    const g = got[0];
    const ts = g.headers['x-service-timestamp'] as string;
    assert.equal(g.headers['x-service-signature'], 'sha256=' + createHmac('sha256', key).update(`${ts}.${g.body}`).digest('hex'));
    assert.equal(JSON.parse(g.body).data.node.path, 'hello.txt');
    await s.server.queue.idle(5000);
    const log = await s.api('GET', '/api/admin/webhooks/deliveries', { token: admin });
    assert.deepEqual(
      log.body.deliveries.map((d: any) => [d.event, d.status, d.response_code]),
      [['file.uploaded', 'delivered', 200]],
    );
    await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/hello.txt', content: 'hi again' } });
    await s.server.queue.idle(5000);
    assert.equal(got.length, 1, 'file.updated is not on the allow-list');
    assert.equal((await s.api('DELETE', `/api/admin/webhooks/${created.body.id}`, { token: admin })).status, 200);
  });

  test('the legacy single URL takes every event, unsigned without a key; admin changes are audited', async () => {
    got.length = 0;
    assert.equal((await s.api('PUT', '/api/admin/webhooks/legacy', { token: admin, body: { url: `${hookUrl}/legacy` } })).status, 200);
    await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/hello.txt', content: 'third' } });
    await waitFor(1);
    assert.equal(got[0]?.path, '/legacy');
    assert.equal(got[0].headers['x-service-event'], 'file.updated');
    assert.equal(got[0].headers['x-service-signature'], undefined);
    await s.api('PUT', '/api/admin/webhooks/legacy', { token: admin, body: { url: '' } });
    const n = (await sqlValue(s.server.db, "SELECT count(*) FROM audit WHERE action = 'admin.config_change' AND resource = 'webhooks'")) as number;
    assert.ok(n >= 3, String(n));
  });

  test('bell routes: a drop notifies its owner; list, unread count, mark read; others see nothing', async () => {
    const me = (await s.api('GET', '/api/auth/me', { token: user })).body;
    const uid = me.id ?? me.user?.id;
    await s.server.bus.emit(DEFAULT_TENANT, 'drop.received', { share_id: 1, owner_id: uid, folder: '/Docs/in', files: ['a.pdf'] });
    const l = await s.api('GET', '/api/notifications', { token: user });
    assert.equal(l.status, 200);
    assert.equal(l.body.unread, 1);
    assert.equal(l.body.notifications[0].event, 'drop.received');
    assert.equal(l.body.notifications[0].severity, 'info');
    assert.equal((await s.api('GET', '/api/notifications', { token: admin })).body.notifications.filter((n: any) => n.event === 'drop.received').length, 0);
    assert.equal((await s.api('POST', '/api/notifications/read', { token: admin, body: { ids: [l.body.notifications[0].id] } })).body.marked, 0);
    const r = await s.api('POST', '/api/notifications/read', { token: user, body: { all: true } });
    assert.deepEqual(r.body, { marked: 1, unread: 0 });
    assert.deepEqual((await s.api('GET', '/api/notifications/unread-count', { token: user })).body, { unread: 0 });
    assert.equal((await s.api('GET', '/api/notifications')).status, 401);
  });
});
