import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { ThumbDispatcher, ThumbService, thumbUrl, thumbToken } from '../../server/thumbs';
import { createLogger } from '../../server/lib/log';
import { DEFAULT_TENANT } from '../../server/db';

const skip = needTool('ffmpeg', 'ffmpeg') ?? needTool('pdftoppm', 'poppler-utils') ?? needTool('soffice', 'libreoffice-writer-nogui') ?? false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A one-page PDF; pdftoppm rebuilds the cross-reference table it lacks. */
const PDF = `%PDF-1.4
1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Contents 4 0 R >> endobj
4 0 obj << /Length 44 >> stream
0 0 1 rg 20 20 200 300 re f
endstream endobj
trailer << /Root 1 0 R >>
%%EOF
`;

async function makeFixtures(dir: string): Promise<void> {
  await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#c03030' } })
    .jpeg()
    .toFile(join(dir, 'photo.jpg'));
  await sharp({ create: { width: 300, height: 600, channels: 4, background: { r: 0, g: 128, b: 0, alpha: 0.5 } } })
    .png()
    .toFile(join(dir, 'tall.png'));
  writeFileSync(join(dir, 'broken.png'), 'not a png at all');
  writeFileSync(join(dir, 'camera.heic'), Buffer.alloc(64, 1));
  writeFileSync(join(dir, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><rect width="100" height="50" fill="#2060ff"/></svg>');
  writeFileSync(join(dir, 'doc.pdf'), PDF);
  writeFileSync(join(dir, 'letter.rtf'), '{\\rtf1\\ansi {\\fs48 Hello thumbnails}}');
  writeFileSync(join(dir, 'data.xyz'), 'whatever');
  const ff = (args: string[]) => execFileSync('ffmpeg', ['-v', 'error', '-y', ...args], { cwd: dir });
  // One dark second, then a bright test pattern: the thumbnail must come from the bright part.
  ff([
    '-f',
    'lavfi',
    '-i',
    'color=black:s=320x240:d=1:r=10',
    '-f',
    'lavfi',
    '-i',
    'color=white:s=320x240:d=1:r=10',
    '-filter_complex',
    '[0][1]concat=n=2:v=1[v]',
    '-map',
    '[v]',
    '-pix_fmt',
    'yuv420p',
    'clip.mp4',
  ]);
  ff(['-f', 'lavfi', '-i', 'sine=f=440:d=1', 'tone.wav']);
  ff(['-f', 'lavfi', '-i', 'color=blue:s=64x32', '-frames:v', '1', 'old.bmp']);
}

describe('thumbnails: generators, states, routes, sweeper', { skip }, () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanupRoot: () => void;
  let thumbs: ThumbService;
  const ids: Record<string, number> = {};
  const row = (id: number) =>
    s.server.db.sqlite!.prepare('SELECT thumb_state, thumb_error FROM nodes WHERE id = ?').get(id) as {
      thumb_state: string | null;
      thumb_error: string | null;
    };

  before(async () => {
    // This suite drives generation itself: synced files wait for it instead of getting thumbnails on their own.
    s = await startTestServer({ SERVICE_THUMBS_ON_SYNC: 'false' });
    admin = await s.login();
    ({ dir: root, cleanup: cleanupRoot } = tempDir('filedock-thumbs-'));
    await makeFixtures(root);
    const r = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Pics', driver: 'local', config: { path: root } } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (let i = 0; i < 200; i++) {
      const rows = s.server.db.sqlite!.prepare("SELECT id, name FROM nodes WHERE storage_id = ? AND type = 'file'").all(r.body.id) as Array<{
        id: number;
        name: string;
      }>;
      if (rows.length >= 11) {
        for (const x of rows) ids[x.name] = x.id;
        break;
      }
      await sleep(25);
    }
    assert.equal(Object.keys(ids).length, 11, 'the first sync catalogued the fixtures');
    thumbs = new ThumbService(
      s.server.db,
      s.server.services.ops,
      s.server.bus,
      () => DEFAULT_TENANT,
      () => s.server.catalogue.repo.tenants(),
      s.server.dirs.thumbs,
      createLogger('error'),
    );
  });
  after(async () => {
    await s.close();
    cleanupRoot();
  });

  test('capabilities report the tools found', async () => {
    const caps = await s.api('GET', '/api/capabilities');
    assert.deepEqual(caps.body.thumbs, {
      enabled: true,
      image: true,
      video: true,
      pdf: true,
      office: true,
      audio: true,
      svg: true,
      imagemagick: caps.body.thumbs.imagemagick,
    });
  });

  test('a write through the gate dispatches a background run: none → pending → ready', async () => {
    const file = join(root, 'fresh.png');
    await sharp({ create: { width: 640, height: 480, channels: 3, background: '#ffff00' } })
      .png()
      .toFile(file);
    const st = await s.server.catalogue.driverFor(s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Pics')!.id).then((d) => d.stat('fresh.png'));
    const node = await s.server.catalogue.gate.written(s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Pics')!.id, 'fresh.png', st, { origin: 'upload' });
    assert.equal(row(node.id).thumb_state, 'pending');
    await s.server.queue.idle(20_000);
    assert.equal(row(node.id).thumb_state, 'ready');
    const meta = await sharp(readFileSync(join(s.server.dirs.thumbs, `${node.id}.jpg`))).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 320, 240]);
  });

  test('backfill runs every kind: images, video, audio, pdf, office, svg, placeholder; HEIC and broken files fail with text', async () => {
    const progress: number[] = [];
    const sum = await thumbs.backfill({ concurrency: 2, progressEvery: 5, onProgress: (p) => progress.push(p.processed) });
    assert.equal(sum.processed, 11);
    assert.deepEqual({ ok: sum.ok, failed: sum.failed, skipped: sum.skipped }, { ok: 9, failed: 2, skipped: 0 });
    assert.deepEqual(progress, [5, 10]);
    for (const name of ['photo.jpg', 'tall.png', 'logo.svg', 'doc.pdf', 'letter.rtf', 'data.xyz', 'clip.mp4', 'tone.wav', 'old.bmp']) {
      assert.equal(row(ids[name]).thumb_state, 'ready', name);
      const meta = await sharp(join(s.server.dirs.thumbs, `${ids[name]}.jpg`)).metadata();
      assert.equal(meta.format, 'jpeg', name);
      assert.ok(Math.max(meta.width!, meta.height!) <= 320, name);
    }
    assert.deepEqual(await dims('photo.jpg'), [320, 213]);
    assert.deepEqual(await dims('tall.png'), [160, 320]);
    assert.deepEqual(await dims('tone.wav'), [320, 120]);
    assert.equal((await dims('clip.mp4'))[0], 320);
    const { channels } = await sharp(join(s.server.dirs.thumbs, `${ids['clip.mp4']}.jpg`)).stats();
    assert.ok(channels[0].mean > 200, `the bright frame was chosen (mean ${channels[0].mean})`);
    assert.equal(row(ids['camera.heic']).thumb_state, 'failed');
    assert.match(row(ids['camera.heic']).thumb_error!, /HEIC and AVIF/);
    assert.equal(row(ids['broken.png']).thumb_state, 'failed');
    assert.ok(row(ids['broken.png']).thumb_error!.length > 0);

    // ready is never re-run; failed only with the flag
    const again = await thumbs.backfill({});
    assert.deepEqual(again, { processed: 0, ok: 0, failed: 0, skipped: 0 });
    const retry = await thumbs.backfill({ retryFailed: true, limit: 1 });
    assert.deepEqual(retry, { processed: 1, ok: 0, failed: 1, skipped: 0 });
  });

  const dims = async (name: string) => {
    const m = await sharp(join(s.server.dirs.thumbs, `${ids[name]}.jpg`)).metadata();
    return [m.width, m.height];
  };

  test('dispatch after a restart: the first drain recovers files left pending, and reports the batch', async () => {
    const id = ids['data.xyz'];
    s.server.db.sqlite!.prepare("UPDATE nodes SET thumb_state = 'pending' WHERE id = ?").run(id);
    const fresh = new ThumbDispatcher(thumbs.repo, thumbs.tenants, s.server.queue, s.server.services.governor);
    assert.equal(fresh.waiting, 0, 'a new process starts with an empty backlog');
    const r = await fresh.drain(thumbs, new AbortController().signal);
    assert.deepEqual(r, { processed: 1, ok: 1, failed: 0, skipped: 0, bytes_read: 0 });
    assert.equal(row(id).thumb_state, 'ready');
    assert.deepEqual(
      await fresh.drain(thumbs, new AbortController().signal),
      { processed: 0, ok: 0, failed: 0, skipped: 0, bytes_read: 0 },
      'recovery runs once',
    );
  });

  test('GET /api/files/thumb/{id}: stamp, bearer, 400, 401, 404 and the cache header', async () => {
    const id = ids['photo.jpg'];
    const stamped = await fetch(s.url + thumbUrl(id));
    assert.equal(stamped.status, 200);
    assert.equal(stamped.headers.get('content-type'), 'image/jpeg');
    assert.equal(stamped.headers.get('cache-control'), 'private, max-age=86400');
    assert.equal((await sharp(Buffer.from(await stamped.arrayBuffer())).metadata()).width, 320);
    assert.match(thumbUrl(id), new RegExp(`^/api/files/thumb/${id}\\?exp=\\d+&sig=[0-9a-f]{64}$`));
    assert.equal(thumbUrl(id, 1_000_000), thumbUrl(id, 1_000_000 + 60_000), 'stamps within the hour are identical (browser cache)');

    assert.equal((await s.api('GET', `/api/files/thumb/${id}`, { token: admin })).status, 200);
    assert.equal((await s.api('GET', `/api/files/thumb/abc`)).status, 400);
    assert.equal((await s.api('GET', `/api/files/thumb/${id}`)).status, 401);
    const expired = thumbUrl(id, Date.now() - 3 * 86_400_000);
    assert.equal((await fetch(s.url + expired)).status, 401);
    const forged = thumbUrl(id).replace(/sig=./, (m) => (m.endsWith('0') ? 'sig=1' : 'sig=0'));
    assert.equal((await fetch(s.url + forged)).status, 401);
    assert.equal((await fetch(s.url + thumbUrl(ids['camera.heic']))).status, 404, 'failed is not ready');
    assert.equal((await fetch(s.url + thumbUrl(987654))).status, 404);
    assert.equal((await s.api('GET', `/api/files/thumb/987654`, { token: admin })).status, 404);
  });

  test('GET /api/files/thumb?token&size: sizes 64..512 only, token bound to its size', async () => {
    const id = ids['photo.jpg'];
    const r = await fetch(`${s.url}/api/files/thumb?token=${thumbToken(id, 64)}&size=64`);
    assert.equal(r.status, 200);
    const m = await sharp(Buffer.from(await r.arrayBuffer())).metadata();
    assert.equal(Math.max(m.width!, m.height!), 64);
    assert.equal((await fetch(`${s.url}/api/files/thumb?token=${thumbToken(id, 64)}&size=100`)).status, 400);
    assert.equal((await fetch(`${s.url}/api/files/thumb?token=${thumbToken(id, 64)}&size=128`)).status, 401);
    assert.equal((await fetch(`${s.url}/api/files/thumb?size=128`)).status, 401);
  });

  test('sweeper: only old <digits>.jpg files of absent nodes; purge removes at once', async () => {
    const dir = s.server.dirs.thumbs;
    const old = Date.now() / 1000 - 3600;
    writeFileSync(join(dir, '999999.jpg'), 'x');
    utimesSync(join(dir, '999999.jpg'), old, old);
    writeFileSync(join(dir, '999998.jpg'), 'young');
    writeFileSync(join(dir, 'notes.jpg'), 'x');
    utimesSync(join(dir, 'notes.jpg'), old, old);
    utimesSync(join(dir, `${ids['photo.jpg']}.jpg`), old, old);
    assert.equal(await thumbs.sweep(), 1);
    assert.ok(!existsSync(join(dir, '999999.jpg')));
    assert.ok(existsSync(join(dir, '999998.jpg')));
    assert.ok(existsSync(join(dir, 'notes.jpg')));
    assert.ok(existsSync(join(dir, `${ids['photo.jpg']}.jpg`)));
    // A database that cannot answer deletes nothing.
    utimesSync(join(dir, '999998.jpg'), old, old);
    const broken = new ThumbService(s.server.db, s.server.services.ops, s.server.bus, () => DEFAULT_TENANT, thumbs.tenants, dir, createLogger('error'));
    broken.repo.existing = () => {
      throw new Error('database is locked');
    };
    assert.equal(await broken.sweep(), 0);
    assert.ok(existsSync(join(dir, '999998.jpg')));
    await thumbs.remove([999998]);
    assert.ok(!existsSync(join(dir, '999998.jpg')));
  });
});
