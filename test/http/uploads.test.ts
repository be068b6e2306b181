import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { otherInstanceUploads, startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { sqlRows, sqlValue } from '../helpers/sql';

const MiB = 1024 * 1024;

describe('uploads', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-up-'));
    s = await startTestServer({ SERVICE_LIMITS_MAX_UPLOAD_BYTES: String(64 * MiB), SERVICE_UPLOAD_MAX_CHUNK_BYTES: String(2 * MiB) });
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Up', driver: 'local', config: { path: root } } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  const init = (body: object, token = admin) => s.api('POST', '/api/files/upload/init', { token, body });
  /** Session folders of the local storage: in the data dir (same filesystem as the storage), never in the user's folder. */
  const staging = async () => {
    const uid = (await sqlValue(s.server.db, "SELECT uid FROM storages WHERE name = 'Up'")) as string;
    assert.ok(!existsSync(join(root, '.service-staging')), "no staging folder in the user's folder");
    return readdirSync(join(s.server.dirs.state, 'storage', uid, 'staging')).filter((n) => !n.startsWith('.~fd-'));
  };
  const chunk = (id: string, part: number, data: Buffer, headers: Record<string, string> = {}) =>
    s.api('POST', `/api/files/upload/chunk?upload_id=${id}&part=${part}`, {
      token: admin,
      raw: new Uint8Array(data),
      headers: { 'content-type': 'application/octet-stream', ...headers },
    });
  const finalize = (id: string, etags: Array<{ part: number; etag: string }>) =>
    s.api('POST', '/api/files/upload/finalize', { token: admin, body: { upload_id: id, etags } });
  const visible = (name: string) => readdirSync(root).includes(name);

  test('single multipart/form-data upload: path first, then files; streamed, gated and listed', async () => {
    const form = new FormData();
    form.append('path', '/Up/inbox');
    form.append('file', new Blob(['hello world']), 'hello.txt');
    form.append('file', new Blob([randomBytes(1000)]), 'noise.bin');
    const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
    const body = await r.json();
    assert.equal(r.status, 200, JSON.stringify(body));
    assert.equal(body.path, '/Up/inbox/hello.txt');
    assert.equal(body.files.length, 2);
    assert.equal(readFileSync(join(root, 'inbox/hello.txt'), 'utf8'), 'hello world');
    const audit = (await sqlValue(s.server.db, "SELECT count(*) FROM audit WHERE action = 'file.upload'")) as number;
    assert.ok(audit >= 2);
    const found = await s.api('GET', '/api/files/search?q=world', { token: admin });
    assert.deepEqual(
      found.body.entries.map((e: any) => e.name),
      ['hello.txt'],
    );
    const late = new FormData();
    late.append('file', new Blob(['x']), 'x.txt');
    late.append('path', '/Up');
    const bad = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: late, headers: { authorization: `Bearer ${admin}` } });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error, 'bad_multipart');
    const json = await s.api('POST', '/api/files/upload', { token: admin, body: { path: '/Up' } });
    assert.equal(json.body.error, 'bad_multipart');
  });

  test('a form refused before its file part is read is answered, and the server lives on', async () => {
    // The refused part is left unread; the parser still meets the body's end and raises on that part.
    for (const [field, value, size] of [
      ['path', '/no-such-storage', 64 * 1024],
      ['path', '/no-such-storage', 4 * MiB],
      ['other', 'x', 64 * 1024],
      ['other', 'x', 4 * MiB],
    ] as const) {
      const form = new FormData();
      form.append(field, value);
      form.append('file', new Blob([randomBytes(size)]), 'big.bin');
      const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
      assert.ok(r.status >= 400 && r.status < 500, `refused: ${r.status}`);
      assert.ok((await r.json()).error);
    }
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await s.api('GET', '/api/capabilities')).status, 200, 'still serving');
  });

  test('chunked: parts out of order and re-sent, status for resume, wrong etags refused, atomic publish', async () => {
    const data = randomBytes(5 * MiB + 123);
    const i = await init({ path: '/Up/big.bin', size: data.length, mime: 'application/octet-stream', chunk_size: 64 * MiB });
    assert.equal(i.status, 200, JSON.stringify(i.body));
    assert.equal(i.body.chunk_size, 2 * MiB, 'lowered to the configured maximum');
    assert.equal(i.body.presigned_urls, null);
    const id = i.body.upload_id;
    const part = (n: number) => data.subarray((n - 1) * 2 * MiB, Math.min(n * 2 * MiB, data.length));
    const p3 = await chunk(id, 3, part(3));
    assert.equal(p3.status, 200, JSON.stringify(p3.body));
    assert.deepEqual([p3.body.part, p3.body.size], [3, data.length - 4 * MiB]);
    const p1 = await chunk(id, 1, part(1), { 'x-chunk-sha256': createHash('sha256').update(part(1)).digest('hex') });
    assert.equal(p1.status, 200);
    const p1again = await chunk(id, 1, part(1));
    assert.notEqual(p1again.body.etag, p1.body.etag);
    const st = await s.api('GET', `/api/files/upload/status?upload_id=${id}`, { token: admin });
    assert.deepEqual(
      st.body.parts.map((p: any) => p.part),
      [1, 3],
    );
    assert.equal(st.body.path, '/Up/big.bin');
    const missing = await finalize(id, [
      { part: 1, etag: p1again.body.etag },
      { part: 3, etag: p3.body.etag },
    ]);
    assert.equal(missing.status, 409);
    const p2 = await chunk(id, 2, part(2));
    const stale = await finalize(id, [
      { part: 1, etag: p1.body.etag },
      { part: 2, etag: p2.body.etag },
      { part: 3, etag: p3.body.etag },
    ]);
    assert.equal(stale.status, 409, 'a superseded etag is refused');
    assert.ok(!visible('big.bin'), 'nothing is visible before finalize');
    const done = await finalize(id, [
      { part: 1, etag: p1again.body.etag },
      { part: 2, etag: p2.body.etag },
      { part: 3, etag: p3.body.etag },
    ]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.path, '/Up/big.bin');
    assert.equal(done.body.size, data.length);
    assert.ok(readFileSync(join(root, 'big.bin')).equals(data));
    assert.equal((await s.api('GET', `/api/files/upload/status?upload_id=${id}`, { token: admin })).status, 404);
    assert.equal((await finalize(id, [])).status, 404);
  });

  test('a hashed part sent again with the same bytes answers the same etag: a late request of a replaced page does not break finalize', async () => {
    const data = randomBytes(3 * MiB);
    const id = (await init({ path: '/Up/twice.bin', size: data.length, mime: 'application/octet-stream' })).body.upload_id;
    const part = (n: number) => data.subarray((n - 1) * 2 * MiB, Math.min(n * 2 * MiB, data.length));
    const sum = (b: Buffer) => ({ 'x-chunk-sha256': createHash('sha256').update(b).digest('hex') });
    // The resumed page sends both parts; the old page's part 2, cut off before the reload, lands afterwards.
    const p1 = await chunk(id, 1, part(1), sum(part(1)));
    const p2 = await chunk(id, 2, part(2), sum(part(2)));
    const late = await chunk(id, 2, part(2), sum(part(2)));
    assert.deepEqual([p1.status, p2.status, late.status], [200, 200, 200]);
    assert.equal(late.body.etag, p2.body.etag, 'the same bytes, the same etag');
    assert.notEqual(p1.body.etag, p2.body.etag);
    const other = Buffer.from(part(2));
    other[0] ^= 1;
    const changed = await chunk(id, 2, other, sum(other));
    assert.notEqual(changed.body.etag, p2.body.etag, 'other bytes, another etag');
    assert.equal(
      (
        await finalize(id, [
          { part: 1, etag: p1.body.etag },
          { part: 2, etag: p2.body.etag },
        ])
      ).status,
      409,
      'the replaced part is refused',
    );
    await chunk(id, 2, part(2), sum(part(2)));
    const done = await finalize(id, [
      { part: 1, etag: p1.body.etag },
      { part: 2, etag: p2.body.etag },
    ]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(readFileSync(join(root, 'twice.bin')).equals(data));
  });

  test('bad chunks: checksum mismatch, too long, too short, bad part numbers; abort discards', async () => {
    const i = await init({ path: '/Up/c.bin', size: 10 });
    const id = i.body.upload_id;
    const sum = await chunk(id, 1, Buffer.from('0123456789'), { 'x-chunk-sha256': 'a'.repeat(64) });
    assert.equal(sum.status, 422);
    assert.equal(sum.body.error, 'checksum_mismatch');
    assert.deepEqual((await s.api('GET', `/api/files/upload/status?upload_id=${id}`, { token: admin })).body.parts, []);
    assert.equal((await chunk(id, 1, Buffer.from('0123456789AB'))).body.error, 'bad_body');
    assert.equal((await chunk(id, 1, Buffer.from('0123'))).body.error, 'bad_body');
    assert.equal((await chunk(id, 2, Buffer.from('0'))).body.error, 'validation_failed');
    assert.equal((await chunk(id, 0, Buffer.from('0'))).body.error, 'validation_failed');
    assert.equal((await chunk('up_nope-nope-nope', 1, Buffer.from('0'))).status, 404);
    const ok = await chunk(id, 1, Buffer.from('0123456789'));
    assert.equal(ok.status, 200);
    const ab = await s.api('POST', '/api/files/upload/abort', { token: admin, body: { upload_id: id } });
    assert.deepEqual(ab.body, { ok: true });
    assert.equal((await finalize(id, [{ part: 1, etag: ok.body.etag }])).status, 404);
    assert.ok(!visible('c.bin'));
    assert.deepEqual(await staging(), []);
  });

  test('a connection dropped mid-chunk leaves nothing held, and the part can be re-sent', async () => {
    const data = randomBytes(MiB);
    const id = (await init({ path: '/Up/drop.bin', size: data.length })).body.upload_id;
    await new Promise<void>((resolve) => {
      const req = request(`${s.url}/api/files/upload/chunk?upload_id=${id}&part=1`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-length': String(data.length) },
      });
      req.on('error', () => resolve());
      req.write(data.subarray(0, 1000), () => setTimeout(() => (req.destroy(), resolve()), 50));
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual((await s.api('GET', `/api/files/upload/status?upload_id=${id}`, { token: admin })).body.parts, []);
    const p = await chunk(id, 1, data);
    assert.equal((await finalize(id, [{ part: 1, etag: p.body.etag }])).status, 200);
    assert.ok(readFileSync(join(root, 'drop.bin')).equals(data));
  });

  test('an abort during a chunk: the late part is refused and nothing is left behind', async () => {
    const data = randomBytes(MiB);
    const id = (await init({ path: '/Up/aborted.bin', size: data.length })).body.upload_id;
    const before = (await staging()).length;
    const late = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${s.url}/api/files/upload/chunk?upload_id=${id}&part=1`,
        { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-length': String(data.length) } },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.write(data.subarray(0, MiB / 2), () => {
        // Give the server time to start writing the part, then abort under it.
        setTimeout(
          () =>
            void s.api('POST', '/api/files/upload/abort', { token: admin, body: { upload_id: id } }).then((r) => {
              aborted = r.body;
              req.end(data.subarray(MiB / 2));
            }),
          100,
        );
      });
    });
    let aborted: unknown;
    const r = await late;
    assert.deepEqual(aborted, { ok: true });
    assert.equal(r.status, 404, r.body);
    assert.ok(!visible('aborted.bin'));
    assert.equal((await staging()).length, before - 1);
  });

  test('limits: max_upload_bytes at init and while streaming, quota_exceeded, sessions belong to their owner', async () => {
    const big = await init({ path: '/Up/huge.bin', size: 65 * MiB });
    assert.equal(big.status, 413);
    const form = new FormData();
    form.append('path', '/Up');
    form.append('file', new Blob([Buffer.alloc(65 * MiB)]), 'huge.bin');
    const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
    assert.equal(r.status, 413);
    assert.ok(!visible('huge.bin'));
    assert.ok(!readdirSync(root).some((n) => n.startsWith('.~fd-')), 'no temp file left behind');
    await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'q@example.test', username: 'q1', password: 'user-password-1' } });
    const user = await s.login('q@example.test', 'user-password-1');
    const uid = await sqlValue(s.server.db, "SELECT id FROM users WHERE email = 'q@example.test'");
    await sqlRows(s.server.db, 'UPDATE users SET quota_bytes = ? WHERE id = ?', 1000, uid);
    const over = await init({ path: '/Up/q.bin', size: 2000 }, user);
    assert.equal(over.status, 413);
    assert.equal(over.body.error, 'quota_exceeded');
    assert.equal(over.body.code, 'QUOTA_EXCEEDED');
    const mine = await init({ path: '/Up/q.bin', size: 600 }, user);
    assert.equal(mine.status, 200);
    assert.equal((await init({ path: '/Up/q2.bin', size: 600 }, user)).body.error, 'quota_exceeded', 'open sessions count');
    const form2 = new FormData();
    form2.append('path', '/Up');
    form2.append('file', new Blob([Buffer.alloc(2000)]), 'q3.bin');
    const streamed = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form2, headers: { authorization: `Bearer ${user}` } });
    assert.equal(streamed.status, 413);
    assert.equal((await streamed.json()).error, 'quota_exceeded', 'the quota stops a single upload while it streams');
    assert.ok(!visible('q3.bin'));
    const foreign = await s.api('GET', `/api/files/upload/status?upload_id=${mine.body.upload_id}`, { token: admin });
    assert.equal(foreign.status, 404);
  });

  test('two uploads to one path end as one whole file (last finalize wins)', async () => {
    const a = Buffer.alloc(3 * MiB, 'a');
    const b = Buffer.alloc(3 * MiB, 'b');
    const go = async (data: Buffer) => {
      const id = (await init({ path: '/Up/race.bin', size: data.length })).body.upload_id;
      const parts = await Promise.all([1, 2].map((n) => chunk(id, n, data.subarray((n - 1) * 2 * MiB, n * 2 * MiB))));
      return () =>
        finalize(
          id,
          parts.map((p) => ({ part: p.body.part, etag: p.body.etag })),
        );
    };
    const [fa, fb] = await Promise.all([go(a), go(b)]);
    const results = await Promise.all([fa(), fb()]);
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200],
    );
    const got = readFileSync(join(root, 'race.bin'));
    assert.equal(got.length, a.length);
    assert.ok(got.equals(a) || got.equals(b), 'never a mix');
  });

  test('expired sessions are refused and swept with their staged parts', async () => {
    const id = (await init({ path: '/Up/old.bin', size: 10 })).body.upload_id;
    await sqlRows(s.server.db, "UPDATE upload_sessions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", id);
    assert.equal((await chunk(id, 1, Buffer.from('0123456789'))).status, 410);
    const staged = (await staging()).length;
    // The server sweeps hourly; a second service on the same database runs the same sweep now.
    assert.equal(await otherInstanceUploads(s, 'sweeper', MiB).sweep(), 1);
    assert.equal(await sqlValue(s.server.db, 'SELECT count(*) FROM upload_sessions WHERE id = ?', id), 0);
    assert.equal((await staging()).length, staged - 1);
  });
});
