/**
 * Uplink protection of public links (docs/desktop.md "Uplink protection"):
 * the shared egress budget under 50 parallel range clients, exemptions, the
 * per-link stream cap, suspension on distinct addresses (webhook + bell),
 * forged X-Forwarded-For from an untrusted peer, re-enable, accelerators and
 * out-of-range settings.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../server/config';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { DEFAULT_TENANT } from '../../server/db';

const BUDGET_MBPS = 8;
const BUDGET_BPS = BUDGET_MBPS * 125_000;
const BIG = 32 * 1024 * 1024;

let s: TestServer;
let admin: string;
let root: { dir: string; cleanup: () => void };
let hook: Server;
let hookUrl: string;
const hooks: Array<{ event: string; data: any }> = [];

const env = (root: string) => ({
  SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
  SERVICE_DEFAULT_STORAGE_PATH: root,
  SERVICE_DEFAULT_STORAGE_NAME: 'Files',
  SERVICE_PUBLIC_EGRESS_MBPS: String(BUDGET_MBPS),
  SERVICE_PUBLIC_LINK_MAX_STREAMS: '64',
});

async function synced(srv: TestServer, rel: string): Promise<void> {
  const id = srv.server.catalogue.repo.all(DEFAULT_TENANT)[0].id;
  await srv.server.catalogue.syncer.requestSync(id);
  for (let i = 0; i < 200; i++) {
    if (await srv.server.catalogue.nodes.get({ id: id, tenant_id: 1 }, rel)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${rel} never reached the catalogue`);
}

async function link(srv: TestServer, token: string, path: string): Promise<{ id: number; token: string }> {
  const r = await srv.api('POST', '/api/files/share', { token, body: { path } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** A public address per index (TEST-NET-3, never LAN). */
const pub = (i: number) => `203.0.${113 + Math.floor(i / 250)}.${(i % 250) + 1}`;

/** Starts a download and counts what arrives; `stop()` aborts it. */
function download(url: string, headers: Record<string, string>) {
  const ac = new AbortController();
  const marks: Array<[number, number]> = [];
  let bytes = 0;
  let answered: (status: number) => void = () => {};
  /** The response's status once its headers arrive (0 when the request failed or was stopped first). */
  const head = new Promise<number>((r) => (answered = r));
  const status = fetch(url, { headers, signal: ac.signal })
    .then(async (res) => {
      answered(res.status);
      if (!res.body) return res.status;
      try {
        for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
          bytes += c.length;
          marks.push([Date.now(), bytes]);
        }
      } catch {
        /* aborted */
      }
      return res.status;
    })
    .catch(() => (answered(0), 0));
  return {
    status,
    head,
    bytes: () => bytes,
    bytesAt: (t: number) => {
      let b = 0;
      for (const [at, n] of marks) if (at <= t) b = n;
      return b;
    },
    stop: () => ac.abort(),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  root = tempDir('filedock-egress-');
  writeFileSync(join(root.dir, 'big.bin'), Buffer.alloc(BIG, 7));
  writeFileSync(join(root.dir, 'small.txt'), 'x'.repeat(4096));
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      try {
        hooks.push(JSON.parse(body));
      } catch {
        /* not ours */
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/hook`;
  s = await startTestServer(env(root.dir));
  admin = await s.login();
  await synced(s, 'small.txt');
  await synced(s, 'big.bin');
  assert.equal((await s.api('POST', '/api/admin/webhooks', { token: admin, body: { url: hookUrl, events: ['share.suspended'] } })).status, 200);
});

after(async () => {
  await s?.close();
  await new Promise((r) => hook.close(r));
  root.cleanup();
});

describe('public egress budget', () => {
  test('50 parallel range clients on one link stay within 10 % of the budget, each getting a share', async () => {
    const l = await link(s, admin, 'Files://big.bin');
    const span = Math.floor(BIG / 50);
    const clients = Array.from({ length: 50 }, (_, i) =>
      download(`${s.url}/s/${l.token}`, { range: `bytes=${i * span}-${(i + 1) * span - 1}`, 'x-forwarded-for': pub(i) }),
    );
    const t0 = Date.now();
    await sleep(1000);
    const tFrom = Date.now();
    const at = clients.map((c) => c.bytesAt(tFrom));
    const from = at.reduce((a, b) => a + b, 0);
    await sleep(5500);
    const tTo = Date.now();
    // Each client's share in the window: the first second's start-up (50 connections opening one by one
    // on a loaded machine, the first ones alone with the bucket) is not the round robin's steady state.
    const per = clients.map((c, i) => c.bytesAt(tTo) - at[i]);
    const to = from + per.reduce((a, b) => a + b, 0);
    const status = (await s.api('GET', '/api/admin/status', { token: admin })).body.egress;
    clients.forEach((c) => c.stop());
    await Promise.all(clients.map((c) => c.status));
    const rate = ((to - from) * 1000) / (tTo - tFrom);
    const mean = (to - from) / per.length;
    console.log(
      `egress: ${Math.round(rate)} B/s against a budget of ${BUDGET_BPS} B/s over ${tTo - tFrom} ms (${tTo - t0} ms in all); per client min ${Math.min(...per)} max ${Math.max(...per)} mean ${Math.round(mean)}`,
    );
    assert.ok(Math.abs(rate - BUDGET_BPS) <= BUDGET_BPS * 0.1, `rate ${rate} not within 10 % of ${BUDGET_BPS}`);
    assert.ok(Math.min(...per) >= mean * 0.5, 'every client gets a fair share');
    assert.equal(status.budget_bps, BUDGET_BPS);
    assert.ok(status.active_streams >= 40, JSON.stringify(status));
    assert.ok(status.current_bps > BUDGET_BPS * 0.5 && status.current_bps < BUDGET_BPS * 1.2, JSON.stringify(status));
    assert.equal(typeof status.suspended_links, 'number');
  });

  test('LAN and signed-in transfers are not shaped', async () => {
    const l = await link(s, admin, 'Files://big.bin');
    for (const headers of [{}, { 'x-forwarded-for': pub(7), authorization: `Bearer ${admin}` }] as Array<Record<string, string>>) {
      const t = Date.now();
      const res = await fetch(`${s.url}/s/${l.token}`, { headers });
      assert.equal(res.status, 200);
      const n = (await res.arrayBuffer()).byteLength;
      const ms = Date.now() - t;
      assert.equal(n, BIG);
      // Shaped, 32 MiB at 1 MB/s would take 33 s.
      assert.ok(ms < 15_000, `took ${ms} ms`);
    }
  });

  test('the per-link stream cap answers 429 with the envelope and Retry-After', async () => {
    assert.equal((await s.api('PATCH', '/api/admin/uplink', { token: admin, body: { public_link_max_streams: 2 } })).status, 200);
    const l = await link(s, admin, 'Files://big.bin');
    const open = [0, 1].map(() => download(`${s.url}/s/${l.token}`, { 'x-forwarded-for': pub(300) }));
    for (let i = 0; i < 100 && open.some((d) => d.bytes() === 0); i++) await sleep(50);
    const r = await s.api('GET', `/s/${l.token}`, { headers: { 'x-forwarded-for': pub(301), accept: 'application/json' } });
    const page = await fetch(`${s.url}/s/${l.token}`, { headers: { 'x-forwarded-for': pub(303), accept: 'text/html' } });
    open.forEach((d) => d.stop());
    await Promise.all(open.map((d) => d.status));
    assert.equal(r.status, 429);
    assert.equal(r.body.error, 'rate_limited');
    assert.equal(typeof r.body.message, 'string');
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    assert.equal(page.status, 429);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.ok(Number(page.headers.get('retry-after')) >= 1);
    await sleep(200);
    assert.equal((await s.api('GET', `/s/${l.token}`, { headers: { 'x-forwarded-for': pub(302), range: 'bytes=0-9' } })).status, 206);
    assert.equal((await s.api('PATCH', '/api/admin/uplink', { token: admin, body: { public_link_max_streams: null } })).status, 200);
  });

  test('out-of-range settings: 400 with the field; a bad environment value stops the start', async () => {
    for (const [field, value] of [
      ['public_egress_mbps', -1],
      ['public_egress_mbps', 100_001],
      ['public_link_max_streams', 1.5],
      ['public_link_max_addresses', 'many'],
    ] as const) {
      const r = await s.api('PATCH', '/api/admin/uplink', { token: admin, body: { [field]: value } });
      assert.equal(r.status, 400, `${field}=${value}`);
      assert.equal(r.body.error, 'validation_failed');
      assert.equal(r.body.details.field, field);
    }
    const g = await s.api('GET', '/api/admin/uplink', { token: admin });
    assert.equal(g.body.effective.public_egress_mbps, BUDGET_MBPS);
    for (const [k, v] of [
      ['SERVICE_PUBLIC_EGRESS_MBPS', '-5'],
      ['SERVICE_PUBLIC_LINK_MAX_STREAMS', 'lots'],
      ['SERVICE_TRUSTED_PROXIES', '10.0.0.0/99'],
    ]) {
      assert.throws(
        () => loadConfig({ SERVICE_DATA_DIR: root.dir, [k]: v }),
        (e: Error) => e.message.includes(k),
        k,
      );
    }
    assert.equal(loadConfig({ SERVICE_DATA_DIR: root.dir, SERVICE_PUBLIC_EGRESS_MBPS: '' }).publicEgressMbps, 0);
  });
});

describe('suspension', () => {
  test('200 distinct addresses from a trusted proxy suspend the link: 423 page and JSON, webhook, bell; re-enable works', async () => {
    const l = await link(s, admin, 'Files://small.txt');
    const codes: number[] = [];
    for (let i = 0; i < 200; i++) codes.push((await s.api('GET', `/s/${l.token}`, { headers: { 'x-forwarded-for': `198.51.100.9, ${pub(i)}` } })).status);
    assert.deepEqual(codes.slice(0, 100), Array(100).fill(200));
    assert.equal(codes[100], 423);
    assert.ok(codes.slice(100).every((c) => c === 423));
    const json = await s.api('GET', `/api/share/${l.token}/download`, { headers: { accept: 'application/json' } });
    assert.equal(json.status, 423);
    assert.equal(json.body.error, 'link_suspended');
    const page = await fetch(`${s.url}/s/${l.token}`, { headers: { accept: 'text/html', 'accept-language': 'tr' } });
    assert.equal(page.status, 423);
    assert.match(await page.text(), /askıya alındı/);
    const mine = (await s.api('GET', '/api/files/share', { token: admin })).body.shares.find((x: { id: number }) => x.id === l.id);
    assert.equal(mine.state, 'suspended');
    assert.equal(mine.suspended_reason, 'addresses');
    for (let i = 0; i < 200 && !hooks.some((h) => h.event === 'share.suspended' && h.data.share_id === l.id); i++) await sleep(50);
    const h = hooks.find((x) => x.event === 'share.suspended' && x.data.share_id === l.id);
    assert.ok(h, 'webhook share.suspended received');
    assert.equal(h.data.reason, 'addresses');
    assert.equal(h.data.addresses, 101);
    const bell = await s.api('GET', '/api/notifications', { token: admin });
    const list = bell.body.notifications ?? bell.body.items ?? bell.body;
    assert.ok(
      list.some((n: { event: string; data: { share_id: number } }) => n.event === 'share.suspended' && n.data.share_id === l.id),
      JSON.stringify(bell.body).slice(0, 300),
    );
    assert.equal((await s.api('GET', '/api/admin/status', { token: admin })).body.egress.suspended_links, 1);

    assert.equal(
      (await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'other@example.test', username: 'other', password: 'user-password-1' } })).status,
      200,
    );
    const other = await s.login('other@example.test', 'user-password-1');
    assert.equal((await s.api('POST', `/api/files/share/${l.id}/resume`, { token: other })).status, 404);
    const re = await s.api('POST', `/api/files/share/${l.id}/resume`, { token: admin });
    assert.equal(re.status, 200);
    assert.equal(re.body.state, 'active');
    assert.equal((await s.api('GET', `/s/${l.token}`, { headers: { 'x-forwarded-for': pub(999) } })).status, 200);
  });

  test('a download accelerator opening parallel ranges suspends the link', async () => {
    const l = await link(s, admin, 'Files://big.bin');
    const ua = 'aria2/1.36.0';
    const first = download(`${s.url}/s/${l.token}`, { 'x-forwarded-for': pub(500), 'user-agent': ua, range: 'bytes=0-' });
    for (let i = 0; i < 100 && first.bytes() === 0; i++) await sleep(50);
    const more = Array.from({ length: 8 }, (_, i) =>
      download(`${s.url}/s/${l.token}`, { 'x-forwarded-for': pub(500), 'user-agent': ua, range: `bytes=${(i + 1) * 1_000_000}-` }),
    );
    // Each answer's status as its headers arrive (a fixed wait before stopping read 0 from every one on a loaded machine).
    const codes = await Promise.all(more.map((d) => d.head));
    more.forEach((d) => d.stop());
    await Promise.all(more.map((d) => d.status));
    first.stop();
    await first.status;
    assert.ok(codes.includes(423), `codes ${codes}`);
    const mine = (await s.api('GET', '/api/files/share', { token: admin })).body.shares.find((x: { id: number }) => x.id === l.id);
    assert.equal(mine.suspended_reason, 'accelerator');
  });

  test('a forged X-Forwarded-For from an untrusted peer is ignored (no suspension)', async () => {
    const r2 = tempDir('filedock-egress-untrusted-');
    writeFileSync(join(r2.dir, 'small.txt'), 'y'.repeat(1024));
    const u = await startTestServer({ ...env(r2.dir), SERVICE_TRUSTED_PROXIES: '192.0.2.1' });
    try {
      const tok = await u.login();
      await synced(u, 'small.txt');
      const l = await link(u, tok, 'Files://small.txt');
      for (let i = 0; i < 200; i++) assert.equal((await u.api('GET', `/s/${l.token}`, { headers: { 'x-forwarded-for': pub(i) } })).status, 200, `request ${i}`);
      const mine = (await u.api('GET', '/api/files/share', { token: tok })).body.shares.find((x: { id: number }) => x.id === l.id);
      assert.equal(mine.state, 'active');
    } finally {
      await u.close();
      r2.cleanup();
    }
  });
});
