/**
 * Photo, audio and video metadata in search (issue 34), end to end on a real server: photos made by sharp
 * with EXIF, XMP and a spliced IPTC block, a song and a video made by ffmpeg with tags, uploaded, read in the
 * background, then found by a camera, a place or an artist with `match: "metadata"`, and filtered by the date
 * taken. Runs on SQLite and, in the PostgreSQL phase, on PostgreSQL (scripts/test-phases.mjs).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server';
import { extractedRow } from '../helpers/extracted';
import { needTool, tempDir } from '../helpers/tools';
import { hugeHeader, photoWith, recordingWith, withSegment } from '../helpers/media';
import { scanOf } from '../helpers/documents';
import { TextExtractsRepo } from '../../server/catalogue';
import { SNIPPET_MARK_END as END, SNIPPET_MARK_START as START } from '../../server/files/snippet';
import { DEFAULT_TENANT } from '../../server/db';

describe('search by photo, audio and video metadata', () => {
  let s: TestServer;
  let admin: string;
  let cleanup: () => void;
  let texts: TextExtractsRepo;
  const media = tempDir('filedock-media-');

  before(async () => {
    for (const [bin, pkg] of [
      ['ffmpeg', 'ffmpeg'],
      ['ffprobe', 'ffmpeg'],
    ]) {
      const missing = needTool(bin, pkg);
      if (missing) throw new Error(missing);
    }
    const store = tempDir('filedock-metadata-');
    cleanup = store.cleanup;
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Media', driver: 'local', config: { path: store.dir }, sync_mode: 'poll' },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    texts = new TextExtractsRepo(s.server.db);
  });
  after(async () => {
    await s?.close();
    cleanup?.();
    media.cleanup();
  });

  const upload = async (name: string, bytes: Buffer, folder = '/Media') => {
    const form = new FormData();
    form.append('path', folder);
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
    assert.equal(r.status, 200, await r.text());
  };
  const search = (query: string) => s.api('GET', `/api/files/search?${query}`, { token: admin });
  const hits = async (query: string) => {
    const r = await search(query);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.entries.map((e: any) => [e.name, e.match]).sort();
  };
  /** The file's extraction row once it left `pending` for its current version. */
  const extracted = (rel: string, storage = 'Media', ms = 30_000) =>
    extractedRow(s, texts, s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, storage)!.id, rel, ms);

  test('a camera, a place, a keyword or an artist finds the file with match "metadata" and a snippet; a name match stays "name"', async () => {
    await upload(
      'IMG_0001.jpg',
      await photoWith({
        make: 'Canon',
        model: 'EOS 5D Mark IV',
        lens: 'EF24-70mm f/2.8L',
        taken: '2019:06:01 14:22:00',
        offset: '+03:00',
        xmpCity: 'Istanbul',
        keywords: ['ferry', 'seagulls'],
        iptc: { 90: 'Beyoğlu', 101: 'Türkiye' },
      }),
    );
    await upload('DSC_1234.jpg', await photoWith({ make: 'NIKON CORPORATION', model: 'D70', taken: '2005:03:10 09:00:00' }));
    await upload(
      'plain.png',
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#123' } })
        .png()
        .toBuffer(),
    );
    await upload('track01.mp3', recordingWith(media.dir, 'track01.mp3', { title: 'Kalamış', artist: 'Zeki Müren', album: 'Nostalji', genre: 'Classical' }));
    await upload('VID_0001.mp4', recordingWith(media.dir, 'VID_0001.mp4', { title: 'Bosphorus crossing', creation_time: '2020-05-04T10:00:00Z' }));
    await upload('canon-manual.txt', Buffer.from('a manual for a camera'));
    for (const f of ['IMG_0001.jpg', 'DSC_1234.jpg', 'plain.png', 'track01.mp3', 'VID_0001.mp4']) assert.equal((await extracted(f)).state, 'done', f);
    assert.equal((await extracted('IMG_0001.jpg')).taken, Date.parse('2019-06-01T11:22:00Z'));

    const canon = await search('q=canon');
    assert.deepEqual(canon.body.entries.map((e: any) => [e.name, e.match]).sort(), [
      ['IMG_0001.jpg', 'metadata'],
      ['canon-manual.txt', 'name'],
    ]);
    const photo = canon.body.entries.find((e: any) => e.name === 'IMG_0001.jpg');
    assert.ok(photo.snippet.includes(`${START}Canon${END} EOS 5D`), photo.snippet);
    assert.deepEqual(await hits('q=istanbul'), [['IMG_0001.jpg', 'metadata']], 'XMP photoshop:City');
    assert.deepEqual(await hits('q=Beyo%C4%9Flu'), [['IMG_0001.jpg', 'metadata']], 'IPTC City');
    assert.deepEqual(await hits('q=seagulls%20ferry'), [['IMG_0001.jpg', 'metadata']], 'two keywords');
    assert.deepEqual(await hits('q=nikon%20-canon'), [['DSC_1234.jpg', 'metadata']]);
    assert.deepEqual(await hits('q=Zeki%20M%C3%BCren'), [['track01.mp3', 'metadata']], 'an artist');
    assert.deepEqual(await hits('q=nostalji'), [['track01.mp3', 'metadata']], 'an album');
    assert.deepEqual(await hits('q=bosphorus'), [['VID_0001.mp4', 'metadata']], 'a video title');
    // A word in the name and in the metadata: a name match.
    assert.deepEqual(await hits('q=IMG_0001'), [['IMG_0001.jpg', 'name']]);
  });

  test('taken_from / taken_to: by the date taken or recorded; files without one are left out; bad dates are 400', async () => {
    assert.deepEqual(await hits('taken_from=2019-01-01&taken_to=2019-12-31T23:59:59Z'), [['IMG_0001.jpg', 'metadata']]);
    assert.deepEqual(await hits('taken_from=2019-06-01T11:22:00Z&taken_to=2019-06-01T11:22:00Z'), [['IMG_0001.jpg', 'metadata']], 'both ends included');
    assert.deepEqual(await hits('taken_from=2020-01-01'), [['VID_0001.mp4', 'metadata']]);
    assert.deepEqual(await hits('taken_to=2010-01-01'), [['DSC_1234.jpg', 'metadata']]);
    assert.deepEqual(
      await hits('taken_from=2000-01-01'),
      [
        ['DSC_1234.jpg', 'metadata'],
        ['IMG_0001.jpg', 'metadata'],
        ['VID_0001.mp4', 'metadata'],
      ],
      'the png and the song have no date',
    );
    assert.deepEqual(await hits('q=canon&taken_from=2000-01-01'), [['IMG_0001.jpg', 'metadata']], 'the manual has no date');
    assert.deepEqual(await hits('q=canon&taken_from=2020-01-01'), []);
    const bad = await search('taken_from=yesterday');
    assert.deepEqual([bad.status, bad.body.error], [400, 'validation_failed']);
  });

  test('bad input: a corrupt EXIF block, a 50,000 × 50,000 header, an MP3 of garbage tags: bounded, done or failed with a reason; the service lives on', async () => {
    const junk = Buffer.concat([Buffer.from('Exif\0\0II*\0\x08\0\0\0\xff\xff', 'latin1'), randomBytes(60_000)]);
    await upload('corrupt-exif.jpg', withSegment(await photoWith({ make: 'Pentax' }), 0xe1, junk));
    await upload('huge.jpg', await hugeHeader(50_000, 50_000));
    const id3 = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f]);
    await upload('garbage.mp3', Buffer.concat([id3, randomBytes(200_000)]));
    await upload('notapicture.jpg', Buffer.from('plain text wearing a JPEG name'));
    const t0 = Date.now();
    for (const f of ['corrupt-exif.jpg', 'huge.jpg', 'garbage.mp3']) {
      const row = await extracted(f);
      assert.ok(row.state === 'done' || (row.state === 'failed' && row.reason), `${f}: ${JSON.stringify(row)}`);
    }
    const fake = await extracted('notapicture.jpg');
    assert.deepEqual([fake.state, /not a readable picture/.test(fake.reason ?? '')], ['failed', true], JSON.stringify(fake));
    assert.ok(Date.now() - t0 < 30_000);
    assert.deepEqual(await hits('q=istanbul'), [['IMG_0001.jpg', 'metadata']], 'still serving');
  });

  test('a picture on an OCR storage gets both its OCR text and its metadata', async () => {
    const missing = needTool('tesseract', 'tesseract-ocr');
    if (missing) throw new Error(missing);
    const scans = tempDir('filedock-metadata-scans-');
    try {
      const add = await s.api('POST', '/api/admin/storages', {
        token: admin,
        body: { rbac_enabled: false, name: 'Scans', driver: 'local', config: { path: scans.dir }, sync_mode: 'poll', ocr: true },
      });
      assert.deepEqual([add.status, add.body.ocr], [200, true], JSON.stringify(add.body));
      const scan = await sharp(await scanOf(['The quokka receipt', 'paid in cash']))
        .withExif({ IFD0: { Make: 'FUJIFILM', Model: 'X100V' } })
        .jpeg()
        .toBuffer();
      await upload('receipt.jpg', scan, '/Scans');
      assert.equal((await extracted('receipt.jpg', 'Scans', 60_000)).state, 'done');
      assert.deepEqual(await hits('q=quokka'), [['receipt.jpg', 'content']]);
      assert.deepEqual(await hits('q=fujifilm'), [['receipt.jpg', 'metadata']]);
      // A term in each: the longest term the name lacks decides (as for the snippet), here the camera's make.
      assert.deepEqual(await hits('q=fujifilm%20quokka'), [['receipt.jpg', 'metadata']]);
      assert.deepEqual(await hits('q=fuji%20quokka'), [['receipt.jpg', 'content']]);
    } finally {
      scans.cleanup();
    }
  });
});
