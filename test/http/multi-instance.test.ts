/**
 * Several instances on one PostgreSQL (docs/operations.md, "Several
 * instances"), each a real `service serve` process with its own data folder
 * and the same secret key file:
 * - the key check: an instance with another key, or a key file that does not
 *   exist, refuses to start with exit 2 and says why; the data-folder lock is
 *   per instance (two instances run at once);
 * - realtime across instances: an SSE client on instance A gets the change
 *   frame for a file uploaded through instance B within 1 s, and A's listing
 *   of that folder (cached before the upload) shows the file at once;
 * - a setting changed through B is what A answers next;
 * - a download cap is exact with downloads through both instances at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHILD_ADMIN as ADMIN, callJson as api, instanceEnv, spawnServer, type ChildServer } from '../helpers/child-server';
import { tempDir } from '../helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { sse } from '../helpers/sse';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const skip = needPostgres();
describe('several instances on one PostgreSQL', { skip: skip ?? false, timeout: 300_000 }, () => {
  let cluster: PgCluster;
  let url: string;
  const tmp = tempDir('filedock-multi-');
  const key = join(tmp.dir, 'filedock.key');
  const files = join(tmp.dir, 'files');
  const running: ChildServer[] = [];
  const env = (name: string, keyFile = key) => instanceEnv({ url, keyFile, dataDir: join(tmp.dir, name), files });
  const start = async (name: string, keyFile = key) => {
    const s = await spawnServer(env(name, keyFile));
    running.push(s);
    return s;
  };
  /** Starts an instance that must refuse: its exit code and what it printed. */
  const refused = async (name: string, keyFile: string) => {
    const e = await spawnServer(env(name, keyFile)).then(
      (s) => (running.push(s), assert.fail(`instance ${name} started`)),
      (err: Error) => err,
    );
    const m = /server exited with (\d+):\n([\s\S]*)$/.exec(e.message);
    assert.ok(m, e.message);
    return { code: Number(m[1]), log: m[2] };
  };

  before(async () => {
    cluster = await startPostgres();
    url = await cluster.createDatabase('multi');
    writeFileSync(key, randomBytes(32).toString('base64'), { mode: 0o600 });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(files);
  });
  after(async () => {
    for (const s of running) await s.stop().catch(() => {});
    await cluster?.destroy();
    tmp.cleanup();
  });

  test('one key for all: another key or a missing key file stops the start with exit 2; each instance has its own data-folder lock', async () => {
    const a = await start('a');
    assert.match(a.log(), /instance [0-9a-f]{12} on PostgreSQL/, 'the instance id is logged');
    const other = join(tmp.dir, 'other.key');
    writeFileSync(other, randomBytes(32).toString('base64'), { mode: 0o600 });
    const wrong = await refused('c', other);
    assert.equal(wrong.code, 2);
    assert.match(wrong.log, /does not match the one this database was set up with/);
    assert.match(wrong.log, /SERVICE_SECRET_KEY_FILE/);
    const missing = await refused('d', join(tmp.dir, 'nowhere.key'));
    assert.equal(missing.code, 2);
    assert.match(missing.log, /nowhere\.key \(SERVICE_SECRET_KEY_FILE\) does not exist/);
    // The same key on a second instance: it starts beside the first (the lock is in its own data folder, not the database).
    const b = await start('b');
    assert.notEqual(a.url, b.url);
    const token = (await api(b.url, 'POST', '/api/auth/login', undefined, { email: ADMIN.email, password: ADMIN.password })).body.token;
    assert.equal((await api(a.url, 'GET', '/api/files/manager?path=/Files', token)).status, 200, 'a session made on B is good on A (one key, one database)');
  });

  test("a file written through B: A's realtime client gets the change frame within 1 s and A's listing shows it at once", async () => {
    const [a, b] = running;
    const token = (await api(a.url, 'POST', '/api/auth/login', undefined, { email: ADMIN.email, password: ADMIN.password })).body.token;
    // A caches the folder's listing page before the write.
    const before = await api(a.url, 'GET', '/api/files/manager?path=/Files', token);
    assert.equal(before.status, 200);
    assert.ok(!before.body.entries.some((e: { name: string }) => e.name === 'from-b.txt'));
    assert.deepEqual((await api(a.url, 'GET', '/api/files/manager?path=/Files', token)).body, before.body);
    const stream = await sse(`${a.url}/api/events/stream?folder=/Files`, token);
    try {
      assert.ok(await stream.waitFor((f) => f.event === 'ready', 5000), 'the stream is open');
      await sleep(300); // the folder-open revalidation of A settles first
      const form = new FormData();
      form.append('path', '/Files');
      form.append('file', new Blob([new Uint8Array(Buffer.from('written through B\n'))]), 'from-b.txt');
      const up = await fetch(`${b.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
      assert.equal(up.status, 200, await up.text());
      const written = Date.now();
      const frame = await stream.waitFor((f) => f.event === 'change' && f.data.name === 'from-b.txt', 1000);
      assert.ok(frame, `A's client got the change frame within 1 s (frames: ${JSON.stringify(stream.frames.map((f) => f.event))})`);
      assert.deepEqual(
        { folder: frame.data.folder, path: frame.data.path, kind: frame.data.kind },
        { folder: '/Files', path: '/Files/from-b.txt', kind: 'created' },
      );
      const listed = await api(a.url, 'GET', '/api/files/manager?path=/Files', token);
      assert.ok(
        listed.body.entries.some((e: { name: string }) => e.name === 'from-b.txt'),
        `A lists the new file at once (${Date.now() - written} ms after the write)`,
      );
    } finally {
      await stream.close();
    }
  });

  test('a setting changed through B is what A answers next (A had it cached)', async () => {
    const [a, b] = running;
    const token = (await api(a.url, 'POST', '/api/auth/login', undefined, { email: ADMIN.email, password: ADMIN.password })).body.token;
    const before = (await api(a.url, 'GET', '/api/admin/auth/settings', token)).body.allow_signup;
    assert.equal(typeof before, 'boolean');
    assert.equal((await api(b.url, 'PATCH', '/api/admin/auth/settings', token, { allow_signup: !before })).status, 200);
    let seen = before;
    const end = Date.now() + 1000;
    while (seen === before && Date.now() < end) {
      seen = (await api(a.url, 'GET', '/api/admin/auth/settings', token)).body.allow_signup;
      if (seen === before) await sleep(20);
    }
    assert.equal(seen, !before, 'A re-read the setting within 1 s');
  });

  test('a download cap holds across instances: 8 downloads at once through A and B, exactly 3 served', async () => {
    const [a, b] = running;
    const token = (await api(a.url, 'POST', '/api/auth/login', undefined, { email: ADMIN.email, password: ADMIN.password })).body.token;
    const share = await api(a.url, 'POST', '/api/files/share', token, { path: '/Files/from-b.txt', max_downloads: 3 });
    assert.equal(share.status, 200, JSON.stringify(share.body));
    const codes = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const r = await fetch(`${(i % 2 ? b : a).url}/s/${share.body.token}`);
        await r.arrayBuffer();
        return r.status;
      }),
    );
    assert.equal(codes.filter((c) => c === 200).length, 3, `codes: ${codes.join(',')}`);
    assert.ok(
      codes.every((c) => c === 200 || c === 404),
      `codes: ${codes.join(',')}`,
    );
  });
});
