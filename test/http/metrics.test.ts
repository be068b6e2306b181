/**
 * GET /metrics (docs/operations.md, "Metrics"): off by default (404 envelope),
 * the admin's switch, access and token, what the exposition holds (no file
 * names, no tokens; promtool accepts it), and a real Prometheus scraping it
 * with the bearer token until the request rate and the p99 answer.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, uploadFile, type TestServer } from '../helpers/server';
import { freePort, needTool, tempDir } from '../helpers/tools';
import { DEFAULT_TENANT } from '../../server/db';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const noPrometheus = needTool('prometheus', 'prometheus') ?? needTool('promtool', 'prometheus');

/** A server with a local storage `Docs` open to all and one uploaded file whose name must never show in the metrics. */
async function serverWithFile(): Promise<{ s: TestServer; admin: string; file: string; done: () => Promise<void> }> {
  const root = tempDir('filedock-metrics-');
  const s = await startTestServer();
  const admin = await s.login();
  assert.equal(
    (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Docs', driver: 'local', config: { path: root.dir } } }))
      .status,
    200,
  );
  const file = 'quarterly-secret-plan.txt';
  await uploadFile(s, admin, '/Docs', file, Buffer.alloc(4096, 7));
  return { s, admin, file, done: async () => (await s.close(), root.cleanup()) };
}

const scrape = (s: TestServer, headers: Record<string, string> = {}) => fetch(`${s.url}/metrics`, { headers });

test('metrics: off by default, then the token, LAN access and a clean exposition', async () => {
  const { s, admin, file, done } = await serverWithFile();
  try {
    const off = await scrape(s);
    assert.equal(off.status, 404, 'off: not the web app');
    assert.match(off.headers.get('content-type') ?? '', /json/);
    assert.equal((await off.json()).error, 'not_found');

    await s.server.auth.users.create(DEFAULT_TENANT, { email: 'u@example.test', password: 'user-password-1', role: 'user' });
    const user = await s.login('u@example.test', 'user-password-1');
    assert.equal((await s.api('GET', '/api/admin/metrics', { token: user })).status, 403);
    assert.equal((await s.api('PATCH', '/api/admin/metrics', { token: user, body: { enabled: true } })).status, 403);
    assert.deepEqual((await s.api('GET', '/api/admin/metrics', { token: admin })).body, {
      enabled: false,
      access: 'token',
      token_set: false,
      path: '/metrics',
    });
    for (const bad of [{ enabled: 'yes' }, { access: 'everyone' }, { token: 'mine' }]) {
      const r = await s.api('PATCH', '/api/admin/metrics', { token: admin, body: bad });
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.equal(r.body.error, 'validation_failed');
    }

    const on = await s.api('PATCH', '/api/admin/metrics', { token: admin, body: { enabled: true } });
    assert.deepEqual(on.body, { enabled: true, access: 'token', token_set: true, path: '/metrics' }, 'switching on makes a token');
    const token = (await s.api('GET', '/api/admin/metrics/token', { token: admin })).body.token as string;
    assert.match(token, /^[A-Za-z0-9_-]{40,}$/);
    const stored = (s.server.db.sqlite!.prepare("SELECT value FROM settings WHERE key = 'metrics'").get() as { value: string }).value;
    assert.ok(!stored.includes(token) && stored.includes('enc:v1:'), 'the token is encrypted at rest');

    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong' },
      { authorization: `Bearer ${token}x` },
      { authorization: `Bearer ${admin}` },
    ]) {
      const r = await scrape(s, headers);
      assert.equal(r.status, 401, JSON.stringify(headers));
      assert.equal((await r.json()).error, 'unauthenticated');
    }

    // Traffic with a file name and a link token in its paths.
    const raw = await fetch(`${s.url}/api/files/raw?path=${encodeURIComponent(`/Docs/${file}`)}`, { headers: { authorization: `Bearer ${admin}` } });
    assert.equal((await raw.arrayBuffer()).byteLength, 4096);
    const link = await s.api('POST', '/api/files/share', { token: admin, body: { path: `Docs://${file}` } });
    assert.equal(link.status, 200, JSON.stringify(link.body));
    await (await fetch(`${s.url}/s/${link.body.token}`)).arrayBuffer();
    await (
      await fetch(`${s.url}/api/files/manager?path=${encodeURIComponent('/Docs/no-such-folder')}`, { headers: { authorization: `Bearer ${admin}` } })
    ).arrayBuffer();

    const ok = await scrape(s, { authorization: `Bearer ${token}` });
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await ok.text();
    assert.match(text, /filedock_http_requests_total\{method="GET",route="\/api\/files\/raw",code="200"\} 1\b/);
    assert.match(text, /filedock_http_requests_total\{method="GET",route="\/s\/:token",code="200"\} 1\b/);
    assert.match(text, /filedock_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/api\/files\/raw"\} 1\b/);
    const sent = Number(/filedock_http_sent_bytes_total\{route="\/api\/files\/raw"\} (\d+)/.exec(text)?.[1]);
    assert.ok(sent > 4096, `the raw response's bytes (${sent})`);
    assert.ok(Number(/filedock_public_link_sent_bytes_total (\d+)/.exec(text)?.[1]) > 0, 'the link page counts as public egress');
    for (const name of [
      'filedock_nodejs_eventloop_lag_p99_seconds',
      'filedock_process_resident_memory_bytes',
      'filedock_process_cpu_seconds_total',
      'filedock_db_busy_total',
      'filedock_ops_queue_depth',
      'filedock_sync_runs_total',
      'filedock_thumbnails_total',
      'filedock_av_scans_total',
      'filedock_replication_lag_seconds',
      'filedock_replication_failures_pending',
      'filedock_login_failures_total',
      'filedock_gateway_sessions{protocol="sftp"} 0',
      'filedock_http_received_bytes_total',
    ]) {
      assert.ok(text.includes(name), name);
    }
    for (const secret of [file, 'no-such-folder', link.body.token, token, admin, 'Docs']) assert.ok(!text.includes(secret), `no ${secret} in the output`);

    // A failed sign-in counts.
    assert.equal((await s.api('POST', '/api/auth/login', { body: { email: 'u@example.test', password: 'wrong-password-1' } })).status, 401);
    const failed = async () => Number(/filedock_login_failures_total (\d+)/.exec(await (await scrape(s, { authorization: `Bearer ${token}` })).text())?.[1]);
    assert.equal(await failed(), 1);

    if (!noPrometheus) {
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
      assert.equal(check.status, 0, `promtool: ${check.stdout}${check.stderr}`);
    }

    // A new token: the old one stops working at once.
    const fresh = (await s.api('POST', '/api/admin/metrics/token', { token: admin })).body.token as string;
    assert.notEqual(fresh, token);
    assert.equal((await scrape(s, { authorization: `Bearer ${token}` })).status, 401);
    assert.equal((await scrape(s, { authorization: `Bearer ${fresh}` })).status, 200);

    // LAN access: this machine needs no token; an address from the internet (via a trusted proxy) still does.
    assert.equal((await s.api('PATCH', '/api/admin/metrics', { token: admin, body: { access: 'lan' } })).body.access, 'lan');
    assert.equal((await scrape(s)).status, 200, 'from 127.0.0.1 without a token');
    assert.equal((await scrape(s, { 'x-forwarded-for': '203.0.113.9' })).status, 401, 'forwarded from a public address');
    assert.equal((await scrape(s, { 'x-forwarded-for': '203.0.113.9', authorization: `Bearer ${fresh}` })).status, 200, 'the token works from anywhere');

    assert.equal((await s.api('PATCH', '/api/admin/metrics', { token: admin, body: { enabled: false } })).status, 200);
    assert.equal((await scrape(s, { authorization: `Bearer ${fresh}` })).status, 404, 'off again');
  } finally {
    await done();
  }
});

let prometheus: ChildProcess | null = null;
after(() => {
  // Whatever happened in the test.
  if (prometheus && prometheus.exitCode === null) prometheus.kill('SIGKILL');
});

test('metrics: a real Prometheus scrapes with the bearer token; request rate and p99 answer', { skip: noPrometheus ?? false }, async () => {
  const { s, admin, file, done } = await serverWithFile();
  const dir = tempDir('filedock-prom-');
  try {
    await s.api('PATCH', '/api/admin/metrics', { token: admin, body: { enabled: true } });
    const token = (await s.api('GET', '/api/admin/metrics/token', { token: admin })).body.token as string;
    const port = await freePort();
    mkdirSync(join(dir.dir, 'data'));
    writeFileSync(
      join(dir.dir, 'prometheus.yml'),
      [
        'global: {scrape_interval: 1s, evaluation_interval: 1s}',
        'scrape_configs:',
        '  - job_name: filedock',
        '    scrape_interval: 1s',
        '    scrape_timeout: 1s',
        '    metrics_path: /metrics',
        `    authorization: {credentials: ${JSON.stringify(token)}}`,
        `    static_configs: [{targets: ['127.0.0.1:${new URL(s.url).port}']}]`,
        '',
      ].join('\n'),
    );
    let log = '';
    prometheus = spawn(
      '/usr/bin/prometheus',
      [`--config.file=${join(dir.dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir.dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout!.on('data', (d) => (log = (log + d).slice(-4000)));
    prometheus.stderr!.on('data', (d) => (log = (log + d).slice(-4000)));

    const query = async (q: string): Promise<number | null> => {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`);
        const v = (await r.json()).data?.result?.[0]?.value?.[1];
        return v === undefined ? null : Number(v);
      } catch {
        return null; // not listening yet
      }
    };
    const rate = 'sum(rate(filedock_http_requests_total[30s]))';
    const p99 = 'histogram_quantile(0.99, sum by (le) (rate(filedock_http_request_duration_seconds_bucket[30s])))';
    const raw = `${s.url}/api/files/raw?path=${encodeURIComponent(`/Docs/${file}`)}`;
    let seen = { rate: null as number | null, p99: null as number | null };
    const end = Date.now() + 120_000;
    while (Date.now() < end) {
      assert.equal(prometheus.exitCode, null, `prometheus exited: ${log}`);
      for (let i = 0; i < 20; i++) await (await fetch(raw, { headers: { authorization: `Bearer ${admin}` } })).arrayBuffer();
      seen = { rate: await query(rate), p99: await query(p99) };
      if (seen.rate !== null && seen.rate > 0 && seen.p99 !== null && Number.isFinite(seen.p99)) break;
      await sleep(500);
    }
    assert.ok(seen.rate !== null && seen.rate > 0, `request rate answered (${seen.rate}); prometheus log: ${log}`);
    assert.ok(seen.p99 !== null && Number.isFinite(seen.p99) && seen.p99 > 0, `p99 answered (${seen.p99})`);
    const up = await query('up{job="filedock"}');
    assert.equal(up, 1, 'the target is up: the token was accepted');
  } finally {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus!.once('exit', r));
      prometheus.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (prometheus.exitCode === null) prometheus.kill('SIGKILL');
    }
    await done();
    dir.cleanup();
  }
});
