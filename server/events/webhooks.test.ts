import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { DEFAULT_TENANT, openDatabase, type Db } from '../db';
import { JobQueue } from '../jobs';
import { tempDir } from '../../test/helpers/tools';
import { EventBus } from './bus';
import { Bell, attachBell } from './bell';
import { Webhooks, type WebhookTarget } from './webhooks';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('webhooks and the bell (real queue, loopback receiver)', () => {
  let db: Db;
  let bus: EventBus;
  let queue: JobQueue;
  let server: Server;
  let base: string;
  let cleanup: () => void;
  const got: Received[] = [];
  const sockets = new Set<import('node:net').Socket>();
  let flakyCalls = 0;
  let targets: WebhookTarget[] = [];
  let wh: Webhooks;
  const T2 = { tenant_id: 2 };

  before(async () => {
    let dir;
    ({ dir, cleanup } = tempDir('filedock-wh-'));
    db = openDatabase(join(dir, 'db.sqlite'));
    bus = new EventBus(db);
    queue = new JobQueue(db, { concurrency: 4, pollMs: 20 });
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        got.push({ path: req.url!, headers: req.headers, body });
        if (req.url === '/silent') return; // never answers
        if (req.url === '/flaky' && ++flakyCalls === 1) return void res.writeHead(500).end();
        res.writeHead(204).end();
      });
    });
    server.on('connection', (s) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    wh = new Webhooks(db, queue, { targets: () => targets, backoffMs: 20, timeoutMs: 1500, maxAttempts: 3 });
    wh.attach(bus);
    await queue.start();
  });
  after(async () => {
    await queue.stop(100);
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    db.close();
    cleanup();
  });

  const deliveries = () => db.sqlite!.prepare('SELECT * FROM webhook_deliveries ORDER BY created_at').all() as any[];
  const node = { storage_id: 1, storage: 'Docs', path: 'a.txt', name: 'a.txt', size: 3, type: 'file' as const };

  test('a delivery is signed over "<timestamp>.<body>" and carries the event; the allow-list filters; internal events never leave', async () => {
    targets = [
      { id: 'all', tenant_id: 1, url: `${base}/ok`, events: [], secret: 'k-all-0123456789' },
      { id: 'infected-only', tenant_id: 1, url: `${base}/never`, events: ['file.infected'], secret: '' },
    ];
    await bus.emit(DEFAULT_TENANT, 'file.uploaded', { node, actor: null });
    await bus.emit(DEFAULT_TENANT, 'audit', { action: 'file.upload' });
    await queue.idle(5000);
    assert.equal(got.length, 1);
    const r = got[0];
    assert.equal(r.path, '/ok');
    assert.equal(r.headers['x-service-event'], 'file.uploaded');
    const ts = r.headers['x-service-timestamp'] as string;
    assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 10);
    const expected = 'sha256=' + createHmac('sha256', 'k-all-0123456789').update(`${ts}.${r.body}`).digest('hex');
    assert.equal(r.headers['x-service-signature'], expected);
    const body = JSON.parse(r.body);
    assert.equal(body.event, 'file.uploaded');
    assert.equal(body.id, r.headers['x-service-delivery']);
    assert.deepEqual(body.data.node, node);
    assert.deepEqual(
      deliveries().map((d) => [d.target_id, d.status, d.attempts, d.response_code]),
      [['all', 'delivered', 1, 204]],
    );
  });

  test('a failing target is retried with backoff through the queue; one that never answers ends failed, nothing lost', async () => {
    got.length = 0;
    db.sqlite!.prepare('DELETE FROM webhook_deliveries').run();
    targets = [
      { id: 'flaky', tenant_id: 1, url: `${base}/flaky`, events: [], secret: '' },
      { id: 'silent', tenant_id: 1, url: `${base}/silent`, events: [], secret: '' },
    ];
    await bus.emit(DEFAULT_TENANT, 'file.updated', { node, actor: null });
    await queue.idle(10_000);
    const byTarget = Object.fromEntries(deliveries().map((d) => [d.target_id, d]));
    assert.equal(byTarget.flaky.status, 'delivered');
    assert.equal(byTarget.flaky.attempts, 2);
    assert.equal(byTarget.silent.status, 'failed');
    assert.equal(byTarget.silent.attempts, 3);
    assert.equal(byTarget.silent.error, 'timed out');
    assert.equal(got.filter((g) => g.path === '/silent').length, 3);
    assert.equal(got.filter((g) => g.path === '/flaky').length, 2);
    assert.equal(new Set(got.map((g) => JSON.parse(g.body).id)).size, 2, 'each target keeps one delivery id across retries');
  });

  test("a tenant's webhooks hear only its own events, and its deliveries are its own", async () => {
    got.length = 0;
    db.sqlite!.prepare('DELETE FROM webhook_deliveries').run();
    targets = [
      { id: 'one', tenant_id: 1, url: `${base}/one`, events: [], secret: '' },
      { id: 'two', tenant_id: 2, url: `${base}/two`, events: [], secret: '' },
    ];
    await bus.emit(DEFAULT_TENANT, 'file.uploaded', { node, actor: null });
    await bus.emit(T2, 'file.updated', { node: { ...node, storage_id: 2, storage: 'Other' }, actor: null });
    await bus.emit(T2, 'storage.offline', { storage_id: 2, name: 'Other', path: '/mnt/other', reason: 'gone' });
    await queue.idle(5000);
    const heard = (path: string) => got.filter((g) => g.path === path).map((g) => JSON.parse(g.body).event);
    assert.deepEqual(heard('/one'), ['file.uploaded'], "tenant 1's target hears none of tenant 2's events");
    assert.deepEqual(heard('/two').sort(), ['file.updated', 'storage.offline'], "tenant 2's target hears none of tenant 1's");
    assert.deepEqual(
      deliveries()
        .map((d) => [d.target_id, d.tenant_id, d.status])
        .sort(),
      [
        ['one', 1, 'delivered'],
        ['two', 2, 'delivered'],
        ['two', 2, 'delivered'],
      ],
      "each delivery is written in its event's tenant",
    );
    const log = (t: { tenant_id: number }) => wh.list(t).then((l) => l.map((d) => d.target_id));
    assert.deepEqual(await log(DEFAULT_TENANT), ['one'], "tenant 1's log lists none of tenant 2's deliveries");
    assert.deepEqual(await log(T2), ['two', 'two']);
  });

  test('the bell: severities, recipients, unread count, mark read (own rows only)', async () => {
    db.sqlite!.prepare(
      "INSERT INTO users (id, email, username, role, created_at, updated_at) VALUES (1, 'a@x.test', 'a', 'admin', 'now', 'now'), (2, 'u@x.test', 'u', 'user', 'now', 'now')",
    ).run();
    // Tenant 2's admin, with the same e-mail as tenant 1's.
    db.sqlite!.prepare(
      "INSERT INTO users (id, tenant_id, email, username, role, created_at, updated_at) VALUES (3, 2, 'a@x.test', 'a', 'admin', 'now', 'now')",
    ).run();
    const pushed: number[] = [];
    const bell = new Bell(db, (_t, uid) => pushed.push(uid));
    attachBell(bus, bell, { admins: async (t) => (t.tenant_id === 1 ? [1] : [3]), dropOwner: (id) => [id] });
    await bus.emit(DEFAULT_TENANT, 'file.infected', {
      event: 'file.infected',
      severity: 'warning',
      title: 'Infected file: a.txt',
      body: 'x',
      node: { storage_id: 1, path: '/Docs/a.txt', name: 'a.txt', size: 3 },
      meta: { signature: 'Eicar', quarantined: true, trash_path: '.service-trash/s/a.txt' },
    });
    await bus.emit(DEFAULT_TENANT, 'drop.received', { share_id: 5, owner_id: 2, folder: '/Docs/in', files: ['a', 'b'] });
    await bus.emit(DEFAULT_TENANT, 'replica_fail' as never, { title: 'Backup write failed', body: 'x' } as never);
    assert.deepEqual(pushed, [1, 2, 1]);
    const admin = await bell.list(DEFAULT_TENANT, 1);
    assert.deepEqual(
      admin.map((n) => [n.event, n.severity]),
      [
        ['replica_fail', 'warning'],
        ['file.infected', 'warning'],
      ],
    );
    assert.deepEqual(
      (await bell.list(DEFAULT_TENANT, 2)).map((n) => [n.event, n.severity, n.body]),
      [['drop.received', 'info', '2 file(s) in /Docs/in']],
    );
    assert.equal(await bell.unreadCount(DEFAULT_TENANT, 1), 2);
    assert.equal(await bell.markRead(DEFAULT_TENANT, 2, [admin[0].id]), 0, "another user's row is untouched");
    assert.equal(await bell.markRead(DEFAULT_TENANT, 1, [admin[0].id]), 1);
    assert.equal(await bell.unreadCount(DEFAULT_TENANT, 1), 1);
    assert.equal(await bell.markRead(DEFAULT_TENANT, 1), 1);
    assert.equal(await bell.unreadCount(DEFAULT_TENANT, 1), 0);

    // An event of tenant 2 rings its admins in tenant 2, and nobody in tenant 1.
    await bus.emit(T2, 'storage.offline', { storage_id: 2, name: 'Other', path: '/mnt/other', reason: 'gone' });
    assert.deepEqual(
      (await bell.list(T2, 3)).map((n) => n.event),
      ['storage.offline'],
    );
    assert.equal(await bell.unreadCount(DEFAULT_TENANT, 1), 0);
    assert.deepEqual(pushed.slice(3), [3]);
  });
});
