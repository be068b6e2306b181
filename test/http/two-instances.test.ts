// Over 60 s in CI (test-timings.json; issue 37): two built services on one PostgreSQL and s3rver behind a round-robin proxy.
/**
 * Two `service serve` processes on one PostgreSQL, one S3 storage (s3rver),
 * one shared local storage folder and one shared staging folder
 * (`SERVICE_STAGING_DIR`), behind a round-robin HTTP proxy that sends each
 * request to the other instance (issue 24, "A two-instance test"):
 * - a chunked upload whose chunks alternate instances finalizes byte-exact on
 *   the local storage (driver multipart staged in the shared folder), on a
 *   WebDAV storage (no multipart: the sparse staged file in the shared folder)
 *   and on S3 (multipart parts recorded in the database); two finalizes at
 *   once on both instances publish once; a restarting instance's orphan
 *   sweep removes a stray staged file but not a live session's;
 * - a share capped at 5: 50 simultaneous downloads through the proxy, 5 served;
 * - a copy posted through A, its running instance killed (SIGKILL) mid-way:
 *   the other re-queues it once its lease passed (`SERVICE_OP_LEASE`
 *   shortened to 3 s) and finishes it, every file byte-exact at the target.
 * Realtime across instances (a client on A sees a change made through B
 * within 1 s) is shown in multi-instance.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import { roundRobin } from '../helpers/round-robin';
import { CHILD_ADMIN as ADMIN, callJson, instanceEnv, spawnServer, type ChildServer } from '../helpers/child-server';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { startRcloneWebdav, type RcloneWebdav } from '../helpers/rclone-webdav';
import { s3rverConfig, startS3rver, type S3rver } from '../helpers/s3rver';
import { needTool, tempDir } from '../helpers/tools';

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** GETs `path` with `token` and returns the body's sha256 (following a redirect to the store). */
async function digestOf(base: string, token: string, path: string): Promise<string> {
  const res = await fetch(`${base}/api/files/raw?path=${encodeURIComponent(path)}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  const h = createHash('sha256');
  for await (const chunk of Readable.fromWeb(res.body as never)) h.update(chunk as Buffer);
  return h.digest('hex');
}

const skip = needPostgres();
const noRclone = needTool('rclone', 'rclone');
describe('two instances behind a round-robin proxy (PostgreSQL, s3rver)', { skip: skip ?? false, timeout: 600_000 }, () => {
  let cluster: PgCluster;
  let dbUrl: string;
  let s3: S3rver;
  let dav: RcloneWebdav | undefined;
  let proxy: Awaited<ReturnType<typeof roundRobin>>;
  let token: string;
  const tmp = tempDir('filedock-two-');
  const key = join(tmp.dir, 'filedock.key');
  const files = join(tmp.dir, 'files');
  const staging = join(tmp.dir, 'shared-staging');
  /** The running instances, A then B; the proxy alternates between them. */
  const instances: ChildServer[] = [];
  const start = (name: string) =>
    spawnServer(instanceEnv({ url: dbUrl, keyFile: key, dataDir: join(tmp.dir, name), files }, { SERVICE_STAGING_DIR: staging, SERVICE_OP_LEASE: '3s' }));
  const api = (method: string, path: string, body?: unknown) => callJson(proxy.url, method, path, token, body);
  /** One statement on the shared database, behind the instances' backs. */
  const query = async (text: string, params: unknown[] = []) => {
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    try {
      return (await db.query(text, params)).rows;
    } finally {
      await db.end();
    }
  };

  before(async () => {
    cluster = await startPostgres();
    dbUrl = await cluster.createDatabase('two');
    writeFileSync(key, randomBytes(32).toString('base64'), { mode: 0o600 });
    mkdirSync(files);
    s3 = await startS3rver();
    instances.push(await start('a'));
    instances.push(await start('b'));
    proxy = await roundRobin(() => instances.map((s) => s.url));
    token = (await callJson(proxy.url, 'POST', '/api/auth/login', undefined, { email: ADMIN.email, password: ADMIN.password })).body.token;
    const st = await api('POST', '/api/admin/storages', { name: 'S', driver: 's3', config: s3rverConfig(s3, 'files'), sync_mode: 'poll' });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    if (!noRclone) {
      dav = await startRcloneWebdav();
      const d = await api('POST', '/api/admin/storages', {
        name: 'Dav',
        driver: 'webdav',
        config: { url: dav.url, root: '/files', username: dav.user, password: dav.pass },
      });
      assert.equal(d.status, 200, JSON.stringify(d.body));
    }
  });
  after(async () => {
    await proxy?.close();
    for (const s of instances) await s.stop().catch(() => {});
    await dav?.teardown();
    await s3?.close();
    await cluster?.destroy();
    tmp.cleanup();
  });

  /** Sends each part through the proxy, one after the other (so they alternate instances); returns the etags. */
  async function sendParts(id: string, body: Buffer, chunk: number, parts: number[]) {
    const etags: Array<{ part: number; etag: string }> = [];
    const first = proxy.served.length;
    for (const part of parts) {
      const r = await fetch(`${proxy.url}/api/files/upload/chunk?upload_id=${id}&part=${part}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
        body: new Uint8Array(body.subarray((part - 1) * chunk, part * chunk)),
        signal: AbortSignal.timeout(60_000),
      });
      const answer = await r.json();
      assert.equal(r.status, 200, `part ${part}: ${JSON.stringify(answer)}`);
      etags.push({ part, etag: answer.etag });
    }
    const hops = proxy.served.slice(first).map((s) => s.upstream);
    assert.ok(
      hops.every((u, i) => i === 0 || u !== hops[i - 1]),
      `the parts alternate instances: ${hops.join(',')}`,
    );
    return etags;
  }

  /** Finalizes on A and B at the same moment: one publishes, the other is refused (`conflict`, or `not_found` once the winner closed the session). */
  async function finalizeOnBoth(id: string, etags: Array<{ part: number; etag: string }>) {
    const both = await Promise.all(instances.map((s) => callJson(s.url, 'POST', '/api/files/upload/finalize', token, { upload_id: id, etags })));
    const won = both.filter((r) => r.status === 200);
    assert.equal(won.length, 1, JSON.stringify(both));
    const lost = both.find((r) => r.status !== 200)!;
    assert.ok([409, 404].includes(lost.status) && ['conflict', 'not_found'].includes(lost.body.error), JSON.stringify(lost));
    return won[0].body;
  }

  async function chunkedUpload(path: string, size: number, askChunk: number) {
    const body = randomBytes(size);
    const init = await api('POST', '/api/files/upload/init', { path, size, chunk_size: askChunk });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const { upload_id: id, chunk_size: chunk } = init.body;
    const count = Math.ceil(size / chunk);
    assert.ok(count >= 3, `${count} parts`);
    // Out of order, through both instances.
    const order = [...Array(count).keys()].map((i) => i + 1).reverse();
    const etags = await sendParts(id, body, chunk, order);
    return { id, body, etags, chunk };
  }

  test('a chunked upload to the shared local storage: parts staged in SERVICE_STAGING_DIR by both instances, published once, byte-exact', async () => {
    const up = await chunkedUpload('/Files/up/local.bin', 3 * MiB + 12345, MiB);
    const sessions = readdirSync(join(staging, 'storage'), { recursive: true }).map(String);
    assert.ok(
      sessions.some((p) => p.endsWith('/data')),
      `the session is in the shared staging folder: ${sessions.join(' ')}`,
    );
    for (const name of ['a', 'b'])
      assert.ok(
        !existsSync(join(tmp.dir, name, 'state', 'storage')) ||
          !readdirSync(join(tmp.dir, name, 'state', 'storage'), { recursive: true })
            .map(String)
            .some((p) => p.endsWith('/data')),
        `nothing staged in ${name}'s data folder`,
      );
    const published = await finalizeOnBoth(up.id, up.etags);
    assert.equal(published.size, up.body.length);
    assert.equal(await digestOf(proxy.url, token, '/Files/up/local.bin'), sha256(up.body));
    const listing = await api('GET', '/api/files/manager?path=/Files/up');
    assert.deepEqual(
      listing.body.entries.map((e: { name: string; size: number }) => [e.name, e.size]),
      [['local.bin', up.body.length]],
    );
  });

  test('a chunked upload to S3: each part through the other instance, the parts completed as one object', async () => {
    const up = await chunkedUpload('/S/up/s3.bin', 11 * MiB + 777, MiB); // S3 parts are at least 5 MiB: 3 parts
    assert.equal(up.chunk, 5 * MiB);
    await finalizeOnBoth(up.id, up.etags);
    assert.equal(await digestOf(proxy.url, token, '/S/up/s3.bin'), sha256(up.body));
  });

  test("a chunked upload to WebDAV (no multipart): one sparse file in the shared staging folder; a restarting instance's sweep spares it", {
    skip: noRclone ?? undefined,
  }, async () => {
    const size = 4 * MiB + 99;
    const body = randomBytes(size);
    const init = await api('POST', '/api/files/upload/init', { path: '/Dav/up/staged.bin', size, chunk_size: MiB });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const id: string = init.body.upload_id;
    const stagedFile = join(staging, `upload-${id}.part`);
    const early = await sendParts(id, body, MiB, [1, 2]);
    assert.ok(existsSync(stagedFile), 'the staged file is in the shared folder');
    // A stray staged file no session owns, and the sweep's slot long past: B restarts and sweeps about a second after.
    const orphan = join(staging, 'upload-up_orphan0000000000.part');
    writeFileSync(orphan, 'left by a crash');
    await query("UPDATE cron_state SET last_run_at = '2000-01-01T00:00:00.000Z' WHERE name = 'uploads.sweep'");
    await instances[1].stop();
    instances[1] = await start('b');
    for (const end = Date.now() + 15_000; existsSync(orphan); await sleep(100)) if (Date.now() > end) throw new Error('the restarted instance did not sweep');
    assert.ok(existsSync(stagedFile), "the live session's staged file is kept");
    const late = await sendParts(id, body, MiB, [3, 4, 5]);
    await finalizeOnBoth(id, [...early, ...late]);
    assert.equal(await digestOf(proxy.url, token, '/Dav/up/staged.bin'), sha256(body));
    assert.ok(!existsSync(stagedFile), 'the staged file is removed once published');
  });

  test('a share capped at 5: 50 simultaneous downloads through the proxy, exactly 5 served across both instances', async () => {
    const form = new FormData();
    form.append('path', '/Files');
    form.append('file', new Blob([new Uint8Array(randomBytes(64 * 1024))]), 'capped.bin');
    assert.equal((await fetch(`${proxy.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } })).status, 200);
    const share = await api('POST', '/api/files/share', { path: '/Files/capped.bin', max_downloads: 5 });
    assert.equal(share.status, 200, JSON.stringify(share.body));
    const first = proxy.served.length;
    const codes = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const r = await fetch(`${proxy.url}/s/${share.body.token}`);
        const bytes = Buffer.from(await r.arrayBuffer());
        return r.status === 200 ? bytes.length : r.status;
      }),
    );
    const byUpstream = [0, 1].map((u) => proxy.served.slice(first).filter((s) => s.upstream === u).length);
    assert.deepEqual(byUpstream, [25, 25], 'the proxy spread the downloads over both');
    assert.equal(codes.filter((c) => c === 64 * 1024).length, 5, `results: ${codes.join(',')}`);
    assert.ok(
      codes.every((c) => c === 64 * 1024 || c === 404),
      `the others are refused: ${codes.join(',')}`,
    );
    const mine = await api('GET', '/api/files/share');
    assert.equal(mine.body.shares.find((s: { token: string }) => s.token === share.body.token).downloads, 5);
  });

  test('the instance running a copy (posted through A) killed mid-way: the other takes it over after the lease and finishes it, byte-exact', async (tc) => {
    const count = 24;
    const total = count * 4 * MiB;
    const digests = new Map<string, string>();
    for (let i = 0; i < count; i++) {
      const name = `f-${String(i).padStart(2, '0')}.bin`;
      const body = randomBytes(4 * MiB);
      digests.set(name, sha256(body));
      const form = new FormData();
      form.append('path', '/Files/big');
      form.append('file', new Blob([new Uint8Array(body)]), name);
      const r = await fetch(`${proxy.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.status, 200, await r.text());
    }
    const copy = await callJson(instances[0].url, 'POST', '/api/files/copy', token, { from: '/Files/big', to: '/S/big' });
    assert.equal(copy.status, 202, JSON.stringify(copy.body));
    const id: string = copy.body.operation_id;
    let op: any;
    for (const end = Date.now() + 60_000; ; await sleep(20)) {
      op = (await api('GET', `/api/files/ops/${id}`)).body;
      assert.ok(!['completed', 'failed', 'cancelled'].includes(op.status), `the copy ended before the kill: ${JSON.stringify(op)}`);
      if (op.status === 'running' && op.bytes_done >= total / 4) break; // a quarter in: files done, files to do
      if (Date.now() > end) throw new Error(`the copy did not get a quarter in: ${JSON.stringify(op)}`);
    }
    // Posted through A, claimed by whichever queue came first: the instance holding its lease is the one killed.
    const [{ lease_owner: owner }] = await query('SELECT lease_owner FROM ops WHERE id = $1', [id]);
    const runner = instances.findIndex((s) => s.log().includes(`instance ${owner} on PostgreSQL`));
    assert.ok(runner >= 0, `the lease owner ${owner} is one of the instances`);
    const [victim] = instances.splice(runner, 1);
    const survivor = instances[0];
    const doneAtKill = op.bytes_done;
    await victim.kill();
    const killedAt = Date.now();
    for (const end = Date.now() + 120_000; ; await sleep(100)) {
      op = (await api('GET', `/api/files/ops/${id}`)).body;
      if (['completed', 'failed', 'cancelled'].includes(op.status)) break;
      if (Date.now() > end) throw new Error(`op still ${op.status}: ${JSON.stringify(op)}`);
    }
    const tookMs = Date.now() - killedAt;
    assert.equal(op.status, 'completed', JSON.stringify(op));
    // The killed instance may have held other ops too (a sync, a thumbnail): the copy's second attempt is what counts.
    assert.match(survivor.log(), /ops: \d+ running op\(s\) whose lease passed re-queued/, 'the survivor took the op over');
    const [{ attempts }] = await query('SELECT attempts FROM ops WHERE id = $1', [id]);
    assert.ok(Number(attempts) >= 2, `the copy ran again on the survivor (attempts ${attempts})`);
    tc.diagnostic(`instance ${runner ? 'B' : 'A'} killed at ${doneAtKill} of ${total} bytes; the other finished the copy ${tookMs} ms after the kill`);
    const listing = await api('GET', '/api/files/manager?path=/S/big');
    assert.deepEqual(listing.body.entries.map((e: { name: string }) => e.name).sort(), [...digests.keys()]);
    for (const [name, digest] of digests) assert.equal(await digestOf(proxy.url, token, `/S/big/${name}`), digest, name);
  });
});
