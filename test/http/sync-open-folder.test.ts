/**
 * Changes made on disk reach a folder that is open in a browser: local
 * storages (and the first-boot seeded one) watch by default; a folder open on
 * a polling storage is checked when the page opens it and every 5 s after, on
 * a watched one every 15 s (for what no watch reports);
 * POST /api/files/refresh re-checks at once. Real server, real local
 * storages, files written with fs.writeFileSync, the realtime stream read
 * as a browser's EventSource would.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Reads `/api/events/stream` in the background; `waitFor` resolves with the ms until a change frame names `name`
 * (a catch-up frame for a change made before the stream opened, marked `recent`, does not count).
 */
async function openStream(s: TestServer, token: string, folder: string) {
  const ctrl = new AbortController();
  const res = await fetch(`${s.url}/api/events/stream?folder=${encodeURIComponent(folder)}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: ctrl.signal,
  });
  assert.equal(res.status, 200);
  let text = '';
  const reader = res.body!.getReader();
  void (async () => {
    for (;;) {
      const v = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (v.done) return;
      text += new TextDecoder().decode(v.value);
    }
  })();
  while (!text.includes('event: ready')) await sleep(10);
  return {
    async waitFor(name: string, ms: number): Promise<number | null> {
      const t0 = Date.now();
      while (Date.now() - t0 < ms) {
        if (
          text
            .split('\n\n')
            .some(
              (f) => f.startsWith('event: change') && !f.includes('"recent":true') && (f.includes(`"name":${JSON.stringify(name)}`) || f.includes('"name":""')),
            )
        )
          return Date.now() - t0;
        await sleep(25);
      }
      return null;
    },
    /** The change frames read so far. */
    changes: () =>
      text
        .split('\n\n')
        .filter((f) => f.startsWith('event: change'))
        .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6))),
    /** Forgets the frames read so far. */
    clear: () => void (text = ''),
    close: () => ctrl.abort(),
  };
}

describe('changes on disk reach an open folder', () => {
  let s: TestServer;
  let admin: string;
  let seeded: string;
  let root: string;
  const cleanups: Array<() => void> = [];
  const names = (r: { body: { entries: Array<{ name: string }> } }) => r.body.entries.map((e) => e.name);

  before(async () => {
    let c;
    ({ dir: seeded, cleanup: c } = tempDir('filedock-seed-'));
    cleanups.push(c);
    ({ dir: root, cleanup: c } = tempDir('filedock-poll-'));
    cleanups.push(c);
    mkdirSync(join(root, 'inbox'));
    mkdirSync(join(seeded, 'docs'));
    s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_NAME: 'home', SERVICE_DEFAULT_STORAGE_PATH: seeded });
    admin = await s.login();
  });
  after(async () => {
    await s.close();
    for (const c of cleanups) c();
  });

  test('the seeded storage and a new local storage watch by default; a driver that cannot watch polls', async () => {
    const list = (await s.api('GET', '/api/admin/storages', { token: admin })).body.storages as Array<{ id: number; name: string }>;
    const home = await s.api('GET', `/api/admin/storages/${list.find((x) => x.name === 'home')!.id}`, { token: admin });
    assert.equal(home.body.sync_mode, 'fsnotify');
    const r = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'W', driver: 'local', config: { path: join(root, 'inbox') } } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.sync_mode, 'fsnotify');
    const explicit = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { name: 'P', driver: 'local', config: { path: root }, sync_mode: 'poll' },
    });
    assert.equal(explicit.body.sync_mode, 'poll');
  });

  test('watching storage: a file written on disk arrives as a change frame within 3 s', async () => {
    assert.equal((await s.api('GET', '/api/files/manager?path=/home/docs', { token: admin })).status, 200);
    const stream = await openStream(s, admin, '/home/docs');
    await sleep(300);
    writeFileSync(join(seeded, 'docs/from-disk.txt'), 'written outside Filedock');
    const ms = await stream.waitFor('from-disk.txt', 3000);
    stream.close();
    assert.notEqual(ms, null, 'no change frame within 3 s');
    assert.ok(names(await s.api('GET', '/api/files/manager?path=/home/docs', { token: admin })).includes('from-disk.txt'));
  });

  test('watching storage: a change no watch reports (written through a hard link from outside the tree) reaches the open folder within 20 s', async () => {
    const { dir: outside, cleanup } = tempDir('filedock-outside-');
    cleanups.push(cleanup);
    writeFileSync(join(seeded, 'docs/linked.txt'), 'one');
    linkSync(join(seeded, 'docs/linked.txt'), join(outside, 'alias.txt'));
    const sizeOf = async () =>
      (await s.api('GET', '/api/files/manager?path=/home/docs', { token: admin })).body.entries.find((e: { name: string }) => e.name === 'linked.txt')?.size;
    for (let i = 0; i < 200 && (await sizeOf()) !== 3; i++) await sleep(25);
    const stream = await openStream(s, admin, '/home/docs');
    await sleep(1000);
    stream.clear();
    // inotify reports a write to the watch of the folder the writer's path is in: here none of ours.
    appendFileSync(join(outside, 'alias.txt'), ' two three');
    const ms = await stream.waitFor('linked.txt', 20_000);
    stream.close();
    assert.notEqual(ms, null, 'the open folder was not re-checked');
    assert.equal(await sizeOf(), 13);
  });

  test('polling storage: an open folder is re-checked while open (frame within 15 s), Refresh re-checks at once', async () => {
    for (let i = 0; i < 200 && (await s.api('GET', '/api/files/manager?path=/P/inbox', { token: admin })).status !== 200; i++) await sleep(25);
    const stream = await openStream(s, admin, '/P/inbox');
    await sleep(500);
    writeFileSync(join(root, 'inbox/polled.txt'), 'x');
    const ms = await stream.waitFor('polled.txt', 15_000);
    assert.notEqual(ms, null, 'no change frame within 15 s on a polling storage with the folder open');
    stream.close();

    // Refresh: the listing right after it holds a file written a moment before, with no stream open.
    assert.equal((await s.api('GET', '/api/files/manager?path=/P/inbox', { token: admin })).status, 200);
    writeFileSync(join(root, 'inbox/refreshed.txt'), 'y');
    assert.ok(
      !names(await s.api('GET', '/api/files/manager?path=/P/inbox', { token: admin })).includes('refreshed.txt'),
      'listing is served from the catalogue',
    );
    const t0 = Date.now();
    const r = await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/P/inbox' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(Date.now() - t0 < 5000);
    assert.ok(names(await s.api('GET', '/api/files/manager?path=/P/inbox', { token: admin })).includes('refreshed.txt'));
  });

  test('a folder that changed between a listing and the opening of its stream: the stream starts with that change, marked recent', async () => {
    // What a page does: it reads the listing and opens the stream at once. A change landing in between
    // reached nobody, and no later check finds a difference, so the page never showed it.
    const before = await s.api('GET', '/api/files/manager?path=/home/docs', { token: admin });
    assert.equal(before.status, 200);
    const made = await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/home/docs/between.txt', content: 'between' } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.ok(!names(before).includes('between.txt'));
    const stream = await openStream(s, admin, '/home/docs');
    for (let i = 0; i < 100 && !stream.changes().length; i++) await sleep(10);
    const first = stream.changes()[0];
    stream.close();
    assert.equal(first?.recent, true, JSON.stringify(stream.changes()));
    assert.equal(first.folder, '/home/docs');
    assert.ok(names(await s.api('GET', '/api/files/manager?path=/home/docs', { token: admin })).includes('between.txt'), 'the listing read again holds it');

    // A stream opened on a folder with no recent change starts with no change frame.
    const quiet = await openStream(s, admin, '/home');
    await sleep(300);
    assert.deepEqual(quiet.changes(), []);
    quiet.close();
  });

  test('refresh: bad input and unknown paths answer the envelope', async () => {
    const bad = await s.api('POST', '/api/files/refresh', { token: admin, body: { path: 3 } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'validation_failed');
    const missing = await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/nope/x' } });
    assert.equal(missing.status, 404);
    assert.equal((await s.api('POST', '/api/files/refresh', { body: { path: '/P' } })).status, 401);
  });
});
