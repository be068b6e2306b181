import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { needTool, tempDir } from '../../test/helpers/tools';
import { hugeHeader, photoWith, recordingWith, withSegment } from '../../test/helpers/media';
import { extractText, type FileSource } from './extract';
import { ExtractError } from './errors';
import { avMeta, MEDIA_HEAD_BYTES, MEDIA_TAIL_BYTES, PHOTO_HEAD_BYTES, photoMeta } from './media-meta';
import { exifDate, parseExif, parseIptc, parseXmp } from './photo-meta';

const never = new AbortController().signal;

/** A file read by ranges as a remote storage would (no local path), counting the bytes and ranges asked for. */
function remote(name: string, bytes: Buffer) {
  const asked: Array<[number, number]> = [];
  const src: FileSource = {
    name,
    size: bytes.length,
    mime: null,
    localFile: async () => null,
    read: async (r) => (asked.push([r.start, r.end]), Readable.from([bytes.subarray(r.start, r.end + 1)])),
  };
  return { src, asked };
}

test('a photo: camera, lens, places and keywords from EXIF, IPTC and XMP; the date taken with its offset', async () => {
  const jpeg = await photoWith({
    make: 'Canon',
    model: 'EOS 5D Mark IV',
    lens: 'EF24-70mm f/2.8L',
    taken: '2019:06:01 14:22:00',
    offset: '+03:00',
    xmpCity: 'Istanbul',
    keywords: ['ferry', 'Boğaziçi'],
    iptc: { 5: 'Evening ferry', 92: 'Karaköy', 90: 'Beyoğlu', 95: 'İstanbul ili', 101: 'Türkiye' },
  });
  const m = await photoMeta(jpeg);
  for (const v of [
    'Canon',
    'EOS 5D Mark IV',
    'EF24-70mm f/2.8L',
    'Istanbul',
    'ferry',
    'Boğaziçi',
    'Evening ferry',
    'Karaköy',
    'Beyoğlu',
    'İstanbul ili',
    'Türkiye',
  ])
    assert.ok(m.text.split('\n').includes(v), `${v} in ${JSON.stringify(m.text)}`);
  assert.equal(m.taken, Date.parse('2019-06-01T11:22:00Z'));
  assert.ok(m.text.startsWith('2019-06-01\n'), 'the day taken is searchable');
  // Read through the extraction as a remote picture: the head only, one range.
  const { src, asked } = remote('ferry.jpg', jpeg);
  const got = await extractText(src, never, '/tmp');
  assert.equal(got.meta, m.text);
  assert.equal(got.text, '');
  assert.deepEqual(asked, [[0, jpeg.length - 1]]);
  // A remote photo over PHOTO_HEAD_BYTES: its head only, the metadata still there (JPEG's segments lead).
  const noisy = await sharp(randomBytes(1500 * 1500 * 3), { raw: { width: 1500, height: 1500, channels: 3 } })
    .jpeg({ quality: 95 })
    .withExif({ IFD0: { Make: 'Sony' } })
    .toBuffer();
  assert.ok(noisy.length > PHOTO_HEAD_BYTES, `${noisy.length} bytes`);
  const far = remote('big.jpg', noisy);
  assert.equal((await extractText(far.src, never, '/tmp')).meta, 'Sony');
  assert.deepEqual(far.asked, [[0, PHOTO_HEAD_BYTES - 1]]);
  // No offset recorded: the camera's clock read as UTC.
  assert.equal(exifDate('2020:01:02 03:04:05'), Date.parse('2020-01-02T03:04:05Z'));
  assert.equal(exifDate('0000:00:00 00:00:00'), null);
});

test('bad photos: a corrupt or huge EXIF block, a 50,000 × 50,000 header, not a picture: bounded, empty or failed with a reason', async () => {
  // Directory counts, sizes and offsets pointing anywhere: nothing read past the block, nothing thrown.
  const junk = Buffer.concat([Buffer.from('Exif\0\0II*\0\x08\0\0\0\xff\xff', 'latin1'), randomBytes(60_000)]);
  for (let i = 0; i < 20; i++) {
    const b = Buffer.concat([Buffer.from('Exif\0\0MM\0*\0\0\0\x08', 'latin1'), randomBytes(4000)]);
    assert.ok(Array.isArray(parseExif(b).values));
    assert.ok(Array.isArray(parseIptc(randomBytes(4000)).values));
  }
  assert.deepEqual(parseExif(Buffer.alloc(2 * 1024 * 1024)), { values: [], taken: null }, 'over MAX_BLOCK: not read');
  // Crafted packets: one pass, whatever the nesting (a lazy pattern per property took seconds here).
  const x0 = Date.now();
  assert.deepEqual(parseXmp(Buffer.from('<x:xmpmeta><dc:title>'.repeat(20_000))).values, []);
  assert.ok(parseXmp(Buffer.from('<dc:subject>a'.repeat(30_000))).values.length > 1000);
  assert.deepEqual(parseXmp(Buffer.from('<'.repeat(500_000))).values, []);
  assert.ok(Date.now() - x0 < 2000, `crafted XMP took ${Date.now() - x0} ms`);
  const corrupt = withSegment(await photoWith({ make: 'Nikon' }), 0xe1, junk);
  const t0 = Date.now();
  const m = await photoMeta(corrupt);
  assert.ok(typeof m.text === 'string');
  const huge = await photoMeta(await hugeHeader(50_000, 50_000));
  assert.deepEqual(huge, { text: '', taken: null }, 'the header only: no pixels decoded');
  assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
  await assert.rejects(photoMeta(Buffer.from('not a picture at all')), (e: Error) => e instanceof ExtractError && /not a readable picture/.test(e.message));
});

test('audio and video: title, artist, album, genre, year, comment and duration by ffprobe; a remote video read by its head and tail', async (t) => {
  const skip = needTool('ffprobe', 'ffmpeg');
  if (skip) return t.skip(skip);
  const d = tempDir();
  try {
    const mp3 = recordingWith(
      d.dir,
      'song.mp3',
      { title: 'Üsküdar’a Gider İken', artist: 'Safiye Ayla', album: 'Türküler', genre: 'Folk', date: '1958', comment: 'gramophone transfer' },
      { seconds: 3 },
    );
    const song = await extractText(remote('song.mp3', mp3).src, never, d.dir);
    for (const v of ['Üsküdar’a Gider İken', 'Safiye Ayla', 'Türküler', 'Folk', '1958', 'gramophone transfer', '0:03'])
      assert.ok(song.meta!.split('\n').includes(v), `${v} in ${song.meta}`);
    assert.equal(song.taken, null);

    // Over head + tail: a sparse stand-in, two ranges, the `moov` at its end still read.
    const mp4 = recordingWith(
      d.dir,
      'ferry.mp4',
      { title: 'Bosphorus crossing', artist: 'Deniz', creation_time: '2020-05-04T10:00:00Z' },
      { seconds: 12, frame: '640x480' },
    );
    assert.ok(mp4.length > MEDIA_HEAD_BYTES + MEDIA_TAIL_BYTES, `${mp4.length} bytes`);
    const { src, asked } = remote('ferry.mp4', mp4);
    const video = await extractText(src, never, d.dir);
    assert.match(video.meta!, /Bosphorus crossing/);
    assert.match(video.meta!, /^2020-05-04$/m);
    assert.equal(video.taken, Date.parse('2020-05-04T10:00:00Z'));
    assert.deepEqual(asked, [
      [0, MEDIA_HEAD_BYTES - 1],
      [mp4.length - MEDIA_TAIL_BYTES, mp4.length - 1],
    ]);

    // Garbage tags: an ID3v2 header claiming 256 MiB, then noise; and noise alone. Bounded, never thrown past a reason.
    const id3 = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f]);
    for (const bytes of [Buffer.concat([id3, randomBytes(100_000), mp3]), randomBytes(200_000)]) {
      const { src: bad } = remote('bad.mp3', bytes);
      const r = await extractText(bad, never, d.dir).then(
        (x) => x.meta,
        (e) => (assert.ok(e instanceof ExtractError, String(e)), e.message),
      );
      assert.equal(typeof r, 'string');
    }
    await assert.rejects(avMeta('/nonexistent/file.mp3', never), (e: Error) => e instanceof ExtractError && /ffprobe/.test(e.message));
  } finally {
    d.cleanup();
  }
});
