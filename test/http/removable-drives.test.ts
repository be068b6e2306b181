/**
 * Removable drives (issue 23 item 3; docs/desktop.md, "Removable drives"), with
 * real ext4 images loop-mounted: a storage on image A at m1 is synced with
 * thumbnails; unmounting it turns the storage offline (listing from the
 * catalogue, uploads and public links refused, no row removed); image B (another
 * UUID) mounted at m1 is not attached and warns; image A mounted at m2 is
 * re-attached there within 30 s with every row and thumbnail kept.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { LoopVolumes } from '../helpers/loop-volumes';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const skip = LoopVolumes.unavailable() ?? undefined;

/** Polls `fn` until it returns a truthy value; fails naming `what` after `ms`. Returns the value and the time it took. */
async function until<T>(what: string, fn: () => Promise<T> | T, ms: number): Promise<{ value: T; tookMs: number }> {
  const t0 = Date.now();
  let last: T | undefined;
  while (Date.now() - t0 < ms) {
    last = await fn();
    if (last) return { value: last, tookMs: Date.now() - t0 };
    await sleep(100);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
}

describe('a local storage on a removable drive', { skip, timeout: 180_000 }, () => {
  let v: LoopVolumes;
  let s: TestServer;
  let admin: string;
  let id: number;
  let m1: string, m2: string, imgA: string, imgB: string;
  let shareToken: string;
  let rowsBefore: Array<{ id: number; path: string; thumb_state: string | null }>;
  const thumbStat = new Map<number, { ino: number; mtimeMs: number }>();

  const rows = () => s.server.db.sqlite!.prepare('SELECT id, path, thumb_state FROM nodes WHERE storage_id = ? ORDER BY id').all(id) as typeof rowsBefore;
  const storage = async () => (await s.api('GET', `/api/admin/storages/${id}`, { token: admin })).body;
  const upload = (name: string) => {
    const form = new FormData();
    form.append('path', '/USB');
    form.append('file', new Blob([new Uint8Array(Buffer.from('new bytes'))]), name);
    return fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
  };
  const bell = async () =>
    (await s.api('GET', '/api/notifications?limit=50', { token: admin })).body.notifications as Array<{ event: string; body: string; data: any }>;

  before(async () => {
    v = new LoopVolumes();
    imgA = v.image('a');
    imgB = v.image('b');
    m1 = v.folder('m1');
    m2 = v.folder('m2');
    v.mount(imgA, m1);
    for (const [name, bg] of [
      ['red.png', '#c00'],
      ['green.png', '#0a0'],
      ['blue.jpg', '#00c'],
    ] as const) {
      const img = sharp({ create: { width: 400, height: 300, channels: 3, background: bg } });
      writeFileSync(join(m1, name), await (name.endsWith('.png') ? img.png() : img.jpeg()).toBuffer());
    }
    writeFileSync(join(m1, 'notes.txt'), 'kept on the stick');
    s = await startTestServer({ SERVICE_VOLUME_CHECK_INTERVAL: '1s' });
    admin = await s.login();
  });

  after(async () => {
    await s?.close();
    v?.cleanup();
  });

  test('records the volume, syncs the files and makes their thumbnails', async () => {
    const created = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'USB', driver: 'local', config: { path: m1 } } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    id = created.body.id;
    const { value: vol } = await until('the volume to be recorded', async () => (await storage()).volume, 15_000);
    assert.equal(vol.id, v.uuid(imgA), 'the filesystem UUID of image A');
    assert.equal(vol.mount, m1);
    assert.equal(vol.sub, '');
    const pictures = ['red.png', 'green.png', 'blue.jpg'];
    await until('thumbnails of the pictures', () => pictures.every((n) => rows().find((r) => r.path === n)?.thumb_state === 'ready'), 60_000);
    rowsBefore = rows();
    assert.ok(rowsBefore.some((r) => r.path === 'notes.txt'));
    for (const r of rowsBefore.filter((x) => x.thumb_state === 'ready')) {
      const st = statSync(join(s.server.dirs.thumbs, `${r.id}.jpg`));
      thumbStat.set(r.id, { ino: st.ino, mtimeMs: st.mtimeMs });
    }
    assert.equal(thumbStat.size, 3);
    const share = await s.api('POST', '/api/files/share', { token: admin, body: { path: '/USB/red.png' } });
    assert.equal(share.status, 200, JSON.stringify(share.body));
    shareToken = share.body.token;
    assert.equal((await fetch(`${s.url}/s/${shareToken}`)).status, 200, 'the link works while the drive is in');
  });

  test('unplugged: offline within the check interval, listed from the catalogue, writes and links refused, nothing removed', async () => {
    v.unmount(m1);
    const { tookMs } = await until('the storage to go offline', async () => (await storage()).status === 'offline', 10_000);
    assert.ok(tookMs < 5_000, `offline after ${tookMs} ms (interval 1 s)`);
    const st = await storage();
    assert.match(st.status_reason, /not mounted/);

    const listing = await s.api('GET', '/api/files/manager?path=%2FUSB', { token: admin });
    assert.equal(listing.status, 200);
    assert.equal(listing.body.storage.offline, true);
    assert.equal(listing.body.storage.readonly, true, 'an offline storage is listed read-only');
    assert.deepEqual(
      listing.body.entries.map((e: { name: string }) => e.name).sort(),
      rowsBefore
        .filter((r) => !r.path.includes('/'))
        .map((r) => r.path)
        .sort(),
    );

    const up = await upload('new.txt');
    assert.equal(up.status, 503);
    assert.equal((await up.json()).error, 'storage_unavailable');
    assert.ok(!existsSync(join(m1, 'new.txt')), 'nothing was written onto the bare mount point');

    const page = await fetch(`${s.url}/s/${shareToken}`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 503);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await page.text(), /cannot be reached right now/);
    const meta = await s.api('GET', `/api/files/share/${shareToken}`);
    assert.equal(meta.status, 503);
    assert.equal(meta.body.error, 'storage_unavailable');
    assert.equal(typeof meta.body.message, 'string');

    // A sync asked for now, and a folder check, remove nothing.
    const sync = await s.api('POST', `/api/admin/storages/${id}/sync`, { token: admin });
    assert.equal(sync.status, 202);
    const { value: run } = await until(
      'the sync run to end',
      async () => {
        const r = (await s.api('GET', `/api/admin/sync/runs/${sync.body.run_id}`, { token: admin })).body;
        return ['completed', 'failed'].includes(r.status) && r;
      },
      15_000,
    );
    assert.equal(run.status, 'failed');
    assert.equal(run.removed, 0);
    await s.server.catalogue.syncer.refresh(id, '', 2_000);
    assert.deepEqual(rows(), rowsBefore, 'every catalogue row kept, thumbnails still ready');

    const status = await s.api('GET', '/api/admin/status', { token: admin });
    const off = status.body.offline_storages.find((o: { storage_id: number }) => o.storage_id === id);
    assert.equal(off?.volume_state, 'missing');
    assert.ok(
      (await bell()).some((n) => n.event === 'storage.offline' && n.data.storage_id === id),
      'admins are told in the bell',
    );
  });

  test('another drive at the same mount point is not attached: a warning, nothing synced over it', async () => {
    v.mount(imgB, m1);
    writeFileSync(join(m1, 'intruder.txt'), 'not from the USB storage');
    const { value: st } = await until(
      'the mismatch warning',
      async () => {
        const x = await storage();
        return /different volume/.test(x.status_reason ?? '') && x;
      },
      10_000,
    );
    assert.equal(st.status, 'offline');
    assert.match(st.status_reason, new RegExp(v.uuid(imgB)));
    assert.equal(st.config.path, m1, 'the storage still points where it did');
    await until(
      'the mismatch in the bell',
      async () => (await bell()).some((n) => n.event === 'storage.volume_mismatch' && n.data.found === v.uuid(imgB)),
      5_000,
    );
    const status = await s.api('GET', '/api/admin/status', { token: admin });
    assert.equal(status.body.offline_storages.find((o: { storage_id: number }) => o.storage_id === id)?.volume_state, 'foreign');

    await s.server.catalogue.syncer.requestSync(id);
    await s.server.catalogue.syncer.refresh(id, '', 2_000);
    await sleep(1_500);
    assert.deepEqual(rows(), rowsBefore, 'no row added from, or removed because of, the other drive');
    const up = await upload('over.txt');
    assert.equal(up.status, 503);
    assert.ok(!existsSync(join(m1, 'over.txt')));
  });

  test('the same drive mounted elsewhere is re-attached within 30 s: rows and thumbnails kept', async () => {
    v.mount(imgA, m2);
    const { tookMs } = await until(
      'the re-attach',
      async () => {
        const x = await storage();
        return x.status === 'online' && x.config.path === m2;
      },
      30_000,
    );
    const st = await storage();
    assert.equal(st.volume.mount, m2);
    assert.equal(st.status_reason, null);
    assert.ok(tookMs < 30_000, `re-attached after ${tookMs} ms`);

    // The catch-up sync finds nothing new: no row added, removed or changed, no thumbnail made again.
    await until(
      'the catch-up sync',
      () => {
        const r = s.server.db
          .sqlite!.prepare('SELECT status, added, updated, removed FROM sync_runs WHERE storage_id = ? ORDER BY id DESC LIMIT 1')
          .get(id) as {
          status: string;
          added: number;
          updated: number;
          removed: number;
        };
        return r.status === 'completed' && r;
      },
      15_000,
    ).then(({ value }) => assert.deepEqual({ ...value }, { status: 'completed', added: 0, updated: 0, removed: 0 }));
    assert.deepEqual(rows(), rowsBefore);
    for (const [nodeId, before] of thumbStat) {
      const now = statSync(join(s.server.dirs.thumbs, `${nodeId}.jpg`));
      assert.deepEqual({ ino: now.ino, mtimeMs: now.mtimeMs }, before, `thumbnail of node ${nodeId} untouched`);
    }
    assert.ok((await bell()).some((n) => n.event === 'storage.online' && n.data.reattached_from === m1 && n.data.path === m2));
    const audit = await s.api('GET', '/api/admin/audit?limit=50', { token: admin });
    assert.ok(JSON.stringify(audit.body).includes('storage.reattach'), 'the re-attach is audited');

    // Served from the new place again.
    assert.equal((await fetch(`${s.url}/s/${shareToken}`)).status, 200);
    assert.equal((await upload('after.txt')).status, 200);
    assert.ok(existsSync(join(m2, 'after.txt')));
    assert.ok(!existsSync(join(m1, 'after.txt')), 'not onto the other drive');
  });
});

describe('a server started while the drive of a storage is unplugged', { skip, timeout: 120_000 }, () => {
  let v: LoopVolumes;
  const data = tempDir('filedock-srv-unplugged-');
  const servers: TestServer[] = [];
  after(async () => {
    for (const x of servers) await x.close().catch(() => undefined);
    v?.cleanup();
    data.cleanup();
  });

  test('holds the storage offline from its first moment (its folder is not made on the disk below), and takes it back at the same place', async () => {
    v = new LoopVolumes();
    const img = v.image('c');
    const m = v.folder('m');
    v.mount(img, m);
    const photos = join(m, 'photos');
    mkdirSync(photos);
    for (const n of ['a.txt', 'b.txt']) writeFileSync(join(photos, n), n);
    const start = async () => {
      const x = await startTestServer({ SERVICE_DATA_DIR: data.dir, SERVICE_VOLUME_CHECK_INTERVAL: '1s' });
      servers.push(x);
      return { x, token: await x.login() };
    };
    let { x: s, token } = await start();
    const created = await s.api('POST', '/api/admin/storages', { token, body: { name: 'Photos', driver: 'local', config: { path: photos } } });
    const id = created.body.id as number;
    const rows = () => s.server.db.sqlite!.prepare('SELECT id, path FROM nodes WHERE storage_id = ? ORDER BY id').all(id);
    await until(
      'the volume and the rows',
      async () => (await s.api('GET', `/api/admin/storages/${id}`, { token })).body.volume?.sub === 'photos' && rows().length === 2,
      15_000,
    );
    const before = rows();
    await s.close();
    servers.length = 0;

    v.unmount(m);
    ({ x: s, token } = await start());
    const st = (await s.api('GET', `/api/admin/storages/${id}`, { token })).body;
    assert.equal(st.status, 'offline', 'offline as soon as the server answers');
    assert.match(st.status_reason, /not mounted/);
    assert.ok(!existsSync(photos), 'the storage folder was not created on the filesystem under the mount point');
    const listing = await s.api('GET', '/api/files/manager?path=%2FPhotos', { token });
    assert.equal(listing.body.storage.offline, true);
    assert.equal(listing.body.entries.length, 2);
    assert.deepEqual(rows(), before);

    v.mount(img, m);
    await until('the storage back online', async () => (await s.api('GET', `/api/admin/storages/${id}`, { token })).body.status === 'online', 10_000);
    assert.equal((await s.api('GET', `/api/admin/storages/${id}`, { token })).body.config.path, photos, 'same place');
    const back = (await s.api('GET', '/api/notifications?limit=20', { token })).body.notifications.find((n: { event: string }) => n.event === 'storage.online');
    assert.equal(back?.data.reattached_from, null);
    await until(
      'a catch-up sync',
      () =>
        (s.server.db.sqlite!.prepare('SELECT status FROM sync_runs WHERE storage_id = ? ORDER BY id DESC LIMIT 1').get(id) as { status: string }).status ===
        'completed',
      15_000,
    );
    assert.deepEqual(rows(), before);
  });
});
