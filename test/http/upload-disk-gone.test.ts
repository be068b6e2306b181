/**
 * A chunked upload to a local storage on its own disk (issue 39 item 5): the
 * data dir is on another filesystem, so the session is staged in the root's
 * hidden `.service-staging/`. While the root is missing (renamed away, or its
 * disk unmounted) a chunk answers 503 `storage_unavailable`, not 404: the
 * session is alive, keeps its parts, and resumes and finalizes once the
 * disk is back. Real ext4 images, loop-mounted (test/helpers/loop-volumes.ts).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { LoopVolumes } from '../helpers/loop-volumes';

const MiB = 1024 * 1024;
const CHUNK = MiB;
const skip = LoopVolumes.unavailable() ?? undefined;

describe('a chunked upload whose disk goes away and comes back', { skip, timeout: 180_000 }, () => {
  let v: LoopVolumes;
  let s: TestServer;
  let admin: string;
  let img: string;
  let mnt: string;
  let root: string;

  before(async () => {
    v = new LoopVolumes();
    img = v.image('disk');
    mnt = v.folder('mnt');
    v.mount(img, mnt);
    root = join(mnt, 'files');
    mkdirSync(root);
    s = await startTestServer({ SERVICE_UPLOAD_MAX_CHUNK_BYTES: String(CHUNK), SERVICE_VOLUME_CHECK_INTERVAL: '1s' });
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Disk', driver: 'local', config: { path: root } } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
  });
  after(async () => {
    await s?.close();
    v?.cleanup();
  });

  const chunk = (id: string, part: number, data: Buffer) =>
    s.api('POST', `/api/files/upload/chunk?upload_id=${id}&part=${part}`, {
      token: admin,
      raw: new Uint8Array(data.subarray((part - 1) * CHUNK, part * CHUNK)),
      headers: { 'content-type': 'application/octet-stream' },
    });
  const status = (id: string) => s.api('GET', `/api/files/upload/status?upload_id=${id}`, { token: admin });
  const finalize = (id: string, etags: Array<{ part: number; etag: string }>) =>
    s.api('POST', '/api/files/upload/finalize', { token: admin, body: { upload_id: id, etags } });

  /** Opens a 2-part session and sends part 1; the session is staged on the storage's disk. */
  const started = async (name: string, data: Buffer) => {
    const i = await s.api('POST', '/api/files/upload/init', { token: admin, body: { path: `/Disk/${name}`, size: data.length } });
    assert.equal(i.status, 200, JSON.stringify(i.body));
    const p1 = await chunk(i.body.upload_id, 1, data);
    assert.equal(p1.status, 200, JSON.stringify(p1.body));
    assert.ok(existsSync(join(root, '.service-staging')), 'staged inside the root (another filesystem than the data dir)');
    return { id: i.body.upload_id as string, p1: p1.body.etag as string };
  };

  /** While the root is missing: 503 storage_unavailable, and the session still holds part 1. */
  const refusedWhileGone = async (id: string, data: Buffer) => {
    const r = await chunk(id, 2, data);
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal(r.body.error, 'storage_unavailable');
    const st = await status(id);
    assert.equal(st.status, 200, 'the session is alive');
    assert.deepEqual(
      st.body.parts.map((p: any) => p.part),
      [1],
    );
  };

  test('root renamed away: 503 storage_unavailable; renamed back: the same session resumes and finalizes', async () => {
    const data = randomBytes(2 * CHUNK);
    const { id, p1 } = await started('renamed.bin', data);
    renameSync(root, join(mnt, 'away'));
    try {
      await refusedWhileGone(id, data);
    } finally {
      renameSync(join(mnt, 'away'), root);
    }
    const p2 = await chunk(id, 2, data);
    assert.equal(p2.status, 200, JSON.stringify(p2.body));
    const done = await finalize(id, [
      { part: 1, etag: p1 },
      { part: 2, etag: p2.body.etag },
    ]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(readFileSync(join(root, 'renamed.bin')).equals(data));
  });

  test('disk unmounted: 503 storage_unavailable; mounted again: the same session resumes and finalizes', async () => {
    const data = randomBytes(2 * CHUNK);
    const { id, p1 } = await started('unplugged.bin', data);
    v.unmount(mnt);
    try {
      await refusedWhileGone(id, data);
    } finally {
      v.mount(img, mnt);
    }
    // The volume check may have taken the storage offline meanwhile: it comes back within its interval.
    let p2 = await chunk(id, 2, data);
    for (let i = 0; i < 300 && p2.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      p2 = await chunk(id, 2, data);
    }
    assert.equal(p2.status, 200, JSON.stringify(p2.body));
    const done = await finalize(id, [
      { part: 1, etag: p1 },
      { part: 2, etag: p2.body.etag },
    ]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(readFileSync(join(root, 'unplugged.bin')).equals(data));
  });
});
