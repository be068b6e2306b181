import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { startS3rver, s3rverConfig, type S3rver } from '../helpers/s3rver';

/**
 * A JPEG whose EXIF block (APP1, IFD1) embeds `thumb` as its thumbnail, the
 * way cameras write it: the embedded preview sits in the first kilobytes,
 * the full image after it.
 */
function withExifThumbnail(main: Buffer, thumb: Buffer): Buffer {
  // TIFF header (little endian), IFD0 with no entries, IFD1 with the two thumbnail tags, then the thumbnail bytes.
  const ifd0 = 8;
  const ifd1 = ifd0 + 2 + 4;
  const data = ifd1 + 2 + 2 * 12 + 4;
  const tiff = Buffer.alloc(data + thumb.length);
  tiff.write('II', 0, 'latin1');
  tiff.writeUInt16LE(42, 2);
  tiff.writeUInt32LE(ifd0, 4);
  tiff.writeUInt16LE(0, ifd0);
  tiff.writeUInt32LE(ifd1, ifd0 + 2);
  tiff.writeUInt16LE(2, ifd1);
  const tag = (i: number, id: number, value: number) => {
    const e = ifd1 + 2 + i * 12;
    tiff.writeUInt16LE(id, e);
    tiff.writeUInt16LE(4, e + 2); // LONG
    tiff.writeUInt32LE(1, e + 4);
    tiff.writeUInt32LE(value, e + 8);
  };
  tag(0, 0x0201, data);
  tag(1, 0x0202, thumb.length);
  tiff.writeUInt32LE(0, ifd1 + 2 + 2 * 12);
  thumb.copy(tiff, data);
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const app1 = Buffer.alloc(4);
  app1.writeUInt16BE(0xffe1, 0);
  app1.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([main.subarray(0, 2), app1, payload, main.subarray(2)]);
}

const noise = (w: number, h: number, rgb: { r: number; g: number; b: number }) =>
  sharp({ create: { width: w, height: h, channels: 3, background: rgb, noise: { type: 'gaussian', mean: 128, sigma: 30 } } })
    .png()
    .toBuffer()
    .then((b) => sharp(b).tint(rgb).jpeg({ quality: 95 }).toBuffer());

describe('thumbnails on a remote storage (S3 served by s3rver)', () => {
  let s: TestServer;
  let s3: S3rver;
  let admin: string;

  before(async () => {
    s3 = await startS3rver();
    s = await startTestServer({ SERVICE_THUMBS_SWEEP_INTERVAL: '0' });
    admin = await s.login();
    const r = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Cloud', driver: 's3', config: s3rverConfig(s3, 'photos/') } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
  after(async () => {
    await s?.close();
    await s3?.close();
  });

  const upload = async (name: string, bytes: Buffer) => {
    const form = new FormData();
    form.append('path', '/Cloud');
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
    assert.equal(r.status, 200, await r.text());
  };
  /** Waits for the thumbnail ops and returns the file's row and the bytes the last drain pulled through the driver. */
  const settle = async (name: string) => {
    await s.server.queue.idle(30_000, 0);
    const node = s.server.db.sqlite!.prepare('SELECT id, size, thumb_state, thumb_error FROM nodes WHERE name = ?').get(name) as {
      id: number;
      size: number;
      thumb_state: string;
      thumb_error: string | null;
    };
    const op = s.server.db.sqlite!.prepare("SELECT status, result FROM ops WHERE kind = 'thumb' ORDER BY finished_at DESC LIMIT 1").get() as {
      status: string;
      result: string;
    };
    assert.equal(op.status, 'completed');
    return { node, result: JSON.parse(op.result) as { processed: number; ok: number; bytes_read: number } };
  };

  test('a camera JPEG: one ranged read of the head, the embedded EXIF thumbnail is the source, bytes_read recorded', async () => {
    const main = await noise(2400, 1600, { r: 30, g: 60, b: 220 });
    const embedded = await sharp({ create: { width: 160, height: 120, channels: 3, background: '#e02020' } })
      .jpeg()
      .toBuffer();
    const photo = withExifThumbnail(main, embedded);
    assert.ok(photo.length > 512 * 1024, `the photo is large (${photo.length} bytes)`);
    await upload('camera.jpg', photo);
    const { node, result } = await settle('camera.jpg');
    assert.equal(node.thumb_state, 'ready', String(node.thumb_error));
    assert.equal(node.size, photo.length);
    assert.deepEqual({ processed: result.processed, ok: result.ok }, { processed: 1, ok: 1 });
    assert.equal(result.bytes_read, 128 * 1024, 'exactly the 128 KiB head was fetched');
    assert.ok(result.bytes_read < photo.length / 4);
    const thumb = sharp(join(s.server.dirs.thumbs, `${node.id}.jpg`));
    const meta = await thumb.metadata();
    assert.deepEqual([meta.width, meta.height], [160, 120], 'the embedded preview (never enlarged), not the 2400 px image');
    const { channels } = await thumb.stats();
    assert.ok(channels[0].mean > 180 && channels[2].mean < 80, 'red like the embedded preview, not blue like the photo');
  });

  test('a JPEG without EXIF is downloaded once (the head read is its start) and scaled; bytes_read is its size', async () => {
    const plain = await noise(1600, 1200, { r: 30, g: 60, b: 220 });
    await upload('plain.jpg', plain);
    const { node, result } = await settle('plain.jpg');
    assert.equal(node.thumb_state, 'ready', String(node.thumb_error));
    assert.equal(result.bytes_read, plain.length, 'the head read found no preview; the rest followed it, nothing fetched twice');
    const meta = await sharp(join(s.server.dirs.thumbs, `${node.id}.jpg`)).metadata();
    assert.deepEqual([meta.width, meta.height], [320, 240]);
  });
});
