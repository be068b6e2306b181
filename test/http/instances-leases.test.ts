/**
 * Leases that make per-instance state exact across instances on one
 * PostgreSQL (docs/operations.md, "Several instances"), with `service serve`
 * processes A and B behind a round-robin proxy, a shared local storage and an
 * S3 storage (s3rver) behind a proxy that can freeze CompleteMultipartUpload:
 * - the per-link stream cap, distinct-address limit and accelerator strikes
 *   of public links hold across both instances (each alone would admit its own);
 * - an instance starting while A is inside a finalize leaves that finalize
 *   alone (A renews its lease) and A publishes;
 * - A killed mid-finalize and mid-streams: B refuses both until A's lease
 *   passed (`SERVICE_OP_LEASE` 3 s), then takes the finalize over (a client's
 *   retry publishes byte-exact) and A's link slots are free again.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { CHILD_ADMIN as ADMIN, callJson, instanceEnv, spawnServer, type ChildServer } from '../helpers/child-server';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { roundRobin } from '../helpers/round-robin';
import { s3rverConfig, startS3rver, type S3rver } from '../helpers/s3rver';
import { tempDir } from '../helpers/tools';

const MiB = 1024 * 1024;
const LEASE_MS = 3000;
const MAX_STREAMS = 3;
const MAX_ADDRESSES = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** A public address per index (TEST-NET-3, never LAN). */
const pub = (i: number) => `203.0.113.${i + 1}`;
/** The one address of the stream tests (their links stay under the address limit). */
const STREAMER = pub(200);

/** A public download held open (its body paused, so the server cannot finish it); `status` once the headers came, `close()` ends it. */
function held(url: string, ip: string, headers: Record<string, string> = {}) {
  const req = http.get(url, { headers: { 'x-forwarded-for': ip, ...headers }, agent: false });
  const status = new Promise<number>((resolve) => {
    req.once('response', (res) => {
      res.pause();
      resolve(res.statusCode!);
    });
    req.once('error', () => resolve(0));
  });
  return { status, close: () => req.destroy() };
}

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); await sleep(100)) if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
}

const skip = needPostgres();

describe('two instances: finalize leases and link limits (PostgreSQL)', { skip: skip ?? false, timeout: 300_000 }, () => {
  let cluster: PgCluster;
  let dbUrl: string;
  let s3: S3rver;
  let s3proxy: CountingProxy;
  let proxy: Awaited<ReturnType<typeof roundRobin>>;
  let token: string;
  let freezing = false;
  const tmp = tempDir('filedock-leases-');
  const files = join(tmp.dir, 'files');
  const instances: ChildServer[] = [];
  const start = (name: string) =>
    spawnServer(
      instanceEnv(
        { url: dbUrl, keyFile: join(tmp.dir, 'key'), dataDir: join(tmp.dir, name), files },
        {
          SERVICE_STAGING_DIR: join(tmp.dir, 'staging'),
          SERVICE_OP_LEASE: `${LEASE_MS / 1000}s`,
          SERVICE_PUBLIC_LINK_MAX_STREAMS: String(MAX_STREAMS),
          SERVICE_PUBLIC_LINK_MAX_ADDRESSES: String(MAX_ADDRESSES),
        },
      ),
    );
  const api = (base: string, method: string, path: string, body?: unknown) => callJson(base, method, path, token, body);
  const query = async (text: string, params: unknown[] = []) => {
    const c = new pg.Client({ connectionString: dbUrl });
    await c.connect();
    try {
      return (await c.query(text, params)).rows;
    } finally {
      await c.end();
    }
  };
  const session = async (id: string) =>
    (await query('SELECT state, finalizing_by, finalize_until::float8 AS until FROM upload_sessions WHERE id = $1', [id]))[0];
  const linkTo = async (path: string) => {
    let r = await api(proxy.url, 'POST', '/api/files/share', { path });
    await until(`${path} catalogued`, 15_000, async () => (r = await api(proxy.url, 'POST', '/api/files/share', { path })).status === 200);
    return r.body as { id: number; token: string };
  };
  /** A chunked upload to S3 through `base`, every part sent, not finalized. */
  const upload = async (base: string, path: string) => {
    const body = randomBytes(MiB + 7);
    const init = await api(base, 'POST', '/api/files/upload/init', { path, size: body.length });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const id: string = init.body.upload_id;
    const r = await fetch(`${base}/api/files/upload/chunk?upload_id=${id}&part=1`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(body),
    });
    assert.equal(r.status, 200);
    return { id, body, etags: [{ part: 1, etag: (await r.json()).etag as string }] };
  };
  const digest = async (path: string) => {
    const r = await fetch(`${proxy.url}/api/files/raw?path=${encodeURIComponent(path)}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200);
    return sha256(Buffer.from(await r.arrayBuffer()));
  };

  before(async () => {
    cluster = await startPostgres();
    dbUrl = await cluster.createDatabase('leases');
    writeFileSync(join(tmp.dir, 'key'), randomBytes(32).toString('base64'), { mode: 0o600 });
    mkdirSync(files);
    writeFileSync(join(files, 'big.bin'), Buffer.alloc(64 * MiB, 1));
    writeFileSync(join(files, 'small.txt'), 'x'.repeat(4096));
    s3 = await startS3rver();
    // CompleteMultipartUpload (POST ?uploadId=) waits here while `freezing`: a finalize frozen inside the storage call.
    s3proxy = await startCountingProxy(s3.endpoint, {
      hold: (req) => freezing && req.method === 'POST' && new URL(req.url ?? '/', 'http://x').searchParams.has('uploadId'),
    });
    instances.push(await start('a'), await start('b'));
    proxy = await roundRobin(() => instances.map((s) => s.url));
    token = (await callJson(proxy.url, 'POST', '/api/auth/login', undefined, { email: ADMIN.email, password: ADMIN.password })).body.token;
    const st = await api(proxy.url, 'POST', '/api/admin/storages', {
      name: 'S',
      driver: 's3',
      config: { ...s3rverConfig(s3, 'files'), endpoint: s3proxy.url },
      sync_mode: 'poll',
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
  });
  after(async () => {
    freezing = false;
    s3proxy?.release();
    await proxy?.close();
    for (const s of instances) await s.stop().catch(() => {});
    await s3proxy?.close();
    await s3?.close();
    await cluster?.destroy();
    tmp.cleanup();
  });

  test(`a link capped at ${MAX_STREAMS} streams serves ${MAX_STREAMS} of 10 held downloads across both instances, and again once they end`, async () => {
    const l = await linkTo('/Files/big.bin');
    for (let round = 0; round < 2; round++) {
      const first = proxy.served.length;
      const downloads = Array.from({ length: 10 }, () => held(`${proxy.url}/s/${l.token}`, STREAMER));
      const codes = await Promise.all(downloads.map((d) => d.status));
      assert.deepEqual(new Set(proxy.served.slice(first).map((s) => s.upstream)), new Set([0, 1]), 'both instances took requests');
      assert.equal(codes.filter((c) => c === 200).length, MAX_STREAMS, `round ${round}: ${codes.join(',')}`);
      assert.equal(codes.filter((c) => c === 429).length, 10 - MAX_STREAMS, `round ${round}: ${codes.join(',')}`);
      downloads.forEach((d) => d.close());
      await until(
        'the slots freed',
        10_000,
        async () => Number((await query('SELECT count(*) AS n FROM link_streams WHERE share_id = $1', [l.id]))[0].n) === 0,
      );
    }
  });

  test(`${MAX_ADDRESSES + 1} addresses through alternating instances suspend a link allowing ${MAX_ADDRESSES}`, async () => {
    const l = await linkTo('/Files/small.txt');
    const codes: number[] = [];
    for (let i = 0; i <= MAX_ADDRESSES; i++) codes.push((await fetch(`${proxy.url}/s/${l.token}`, { headers: { 'x-forwarded-for': pub(50 + i) } })).status);
    assert.deepEqual(codes, [...Array(MAX_ADDRESSES).fill(200), 423], 'neither instance saw more than 3 addresses itself');
    const [row] = await query('SELECT suspended_reason FROM shares WHERE id = $1', [l.id]);
    assert.equal(row.suspended_reason, 'addresses');
  });

  test('a download accelerator whose parallel ranges the proxy spreads over both instances suspends the link', async () => {
    const l = await linkTo('/Files/big.bin');
    const ip = pub(120);
    const accel = { 'user-agent': 'aria2/1.36.0', range: 'bytes=0-' };
    const first = held(`${proxy.url}/s/${l.token}`, ip, accel);
    assert.equal(await first.status, 206);
    // Eight more ranges, alternating instances: each one a strike, on whichever instance it lands (each alone saw 4).
    const codes: number[] = [];
    for (let i = 1; i <= 8; i++) {
      const r = await fetch(`${proxy.url}/s/${l.token}`, { headers: { 'x-forwarded-for': ip, 'user-agent': accel['user-agent'], range: `bytes=${i * MiB}-` } });
      codes.push(r.status);
      await r.body?.cancel();
    }
    first.close();
    assert.ok(
      codes.slice(0, 7).every((c) => c === 206 || c === 429),
      codes.join(','),
    );
    assert.equal(codes[7], 423, `the eighth strike suspends: ${codes.join(',')}`);
    const [row] = await query('SELECT suspended_reason FROM shares WHERE id = $1', [l.id]);
    assert.equal(row.suspended_reason, 'accelerator');
  });

  test('an instance starting while A finalizes leaves the finalize alone; A publishes', async () => {
    const [a] = instances;
    const up = await upload(a.url, '/S/live.bin');
    freezing = true;
    const done = api(a.url, 'POST', '/api/files/upload/finalize', { upload_id: up.id, etags: up.etags });
    await until('the finalize reached the storage', 15_000, async () => s3proxy.held() === 1);
    const claimed = await session(up.id);
    assert.equal(claimed.state, 'finalizing');
    assert.ok(claimed.finalizing_by, 'the finalize names its instance');
    const c = await start('c');
    try {
      assert.match(c.log(), /instance \w+ on PostgreSQL/);
      await sleep(LEASE_MS + 500);
      const later = await session(up.id);
      assert.deepEqual([later.state, later.finalizing_by], ['finalizing', claimed.finalizing_by], 'the starting instance did not reopen it');
      assert.ok(later.until > claimed.until, 'A renews its lease');
      const retry = await api(c.url, 'POST', '/api/files/upload/finalize', { upload_id: up.id, etags: up.etags });
      assert.equal(retry.status, 409, 'a second finalize on another instance waits for the live one');
    } finally {
      await c.stop();
    }
    freezing = false;
    s3proxy.release();
    const r = await done;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(await digest('/S/live.bin'), sha256(up.body));
    assert.equal(await session(up.id), undefined, 'the session is closed');
  });

  test('A killed mid-finalize and mid-streams: B refuses both until the lease passed, then takes the finalize over and frees the slots', async () => {
    const [a, b] = instances;
    const l = await linkTo('/Files/big.bin');
    const streams = Array.from({ length: MAX_STREAMS }, () => held(`${a.url}/s/${l.token}`, STREAMER));
    assert.deepEqual(await Promise.all(streams.map((d) => d.status)), Array(MAX_STREAMS).fill(200));
    const up = await upload(a.url, '/S/orphan.bin');
    freezing = true;
    void api(a.url, 'POST', '/api/files/upload/finalize', { upload_id: up.id, etags: up.etags }).catch(() => undefined);
    await until('the finalize reached the storage', 15_000, async () => s3proxy.held() === 1);
    // Taken before the kill: waiting for a loaded machine to reap the process is not time the lease ran.
    const killedAt = Date.now();
    await a.kill();
    instances.splice(0, 1);
    freezing = false;
    s3proxy.release(); // the killed instance's request is gone with its socket: nothing reaches S3
    streams.forEach((d) => d.close());
    assert.equal(await held(`${b.url}/s/${l.token}`, STREAMER).status, 429, 'A’s slots are held until its lease passes');
    assert.equal((await api(b.url, 'POST', '/api/files/upload/finalize', { upload_id: up.id, etags: up.etags })).status, 409);
    let finalized: { status: number; body: any } | undefined;
    await until(
      'B takes the finalize over',
      20_000,
      async () => (finalized = await api(b.url, 'POST', '/api/files/upload/finalize', { upload_id: up.id, etags: up.etags })).status !== 409,
    );
    assert.equal(finalized!.status, 200, JSON.stringify(finalized!.body));
    // A renews its lease every third of it: the last renewal can be up to LEASE_MS / 3 before the kill.
    assert.ok(Date.now() - killedAt >= LEASE_MS - LEASE_MS / 3 - 500, 'not before the lease passed');
    assert.equal(await digest('/S/orphan.bin'), sha256(up.body));
    const again = held(`${b.url}/s/${l.token}`, STREAMER);
    assert.equal(await again.status, 200, 'A’s passed slots are free');
    again.close();
  });
});
