/**
 * Photo, audio and video metadata for search (docs/fulltext.md, "Photo, audio and video metadata"):
 * 1. photos per second through `photoMeta` (sharp's header read plus the EXIF/IPTC/XMP parse) on N 4000 × 3000
 *    JPEGs carrying EXIF, XMP and IPTC, against sharp's `metadata()` alone on the same files (the parse's share);
 * 2. recordings per second through `avMeta` (one ffprobe process each) on N tagged MP3s, against `ffprobe`
 *    run from a shell loop on the same files (the process's own cost);
 * 3. the migration's FTS5 rebuild on SQLite (copying every name into the new three-column table) for a
 *    catalogue of BENCH_NAMES nodes.
 *
 *   npm run bench -- media-meta        (BENCH_FILES=40, BENCH_NAMES=200000, BENCH_RUNS=3)
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { avMeta, photoMeta } from '../server/fulltext/media-meta';
import { photoWith, recordingWith } from '../test/helpers/media';
import { tempDir } from '../test/helpers/tools';
import { median, table } from './lib';

const FILES = Number(process.env.BENCH_FILES ?? 40);
const NAMES = Number(process.env.BENCH_NAMES ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const never = new AbortController().signal;

async function perSecond(files: string[], one: (f: string) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (const f of files) await one(f);
  return files.length / ((performance.now() - t0) / 1000);
}

const d = tempDir('filedock-bench-meta-');
try {
  const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#7a8' } })
    .jpeg({ quality: 80 })
    .toBuffer();
  const tagged = await photoWith({
    make: 'Canon',
    model: 'EOS 5D',
    lens: 'EF24-70mm',
    taken: '2019:06:01 14:22:00',
    xmpCity: 'Istanbul',
    keywords: ['a', 'b'],
    iptc: { 90: 'Beyoğlu' },
  });
  // The tagged small JPEG's metadata segments in front of the big picture's data.
  const head = tagged.subarray(0, tagged.indexOf(Buffer.from([0xff, 0xdb])));
  const photo = Buffer.concat([head, big.subarray(big.indexOf(Buffer.from([0xff, 0xdb])))]);
  const photos = Array.from({ length: FILES }, (_, i) => join(d.dir, `p${i}.jpg`));
  for (const p of photos) writeFileSync(p, photo);
  if (!(await photoMeta(photos[0])).text.includes('Istanbul')) throw new Error('the bench photo carries no metadata');
  for (let i = 0; i < FILES; i++) recordingWith(d.dir, `s${i}.mp3`, { title: `Song ${i}`, artist: 'Bench' }, { seconds: 30 });
  const songs = readdirSync(d.dir)
    .filter((f) => f.endsWith('.mp3'))
    .map((f) => join(d.dir, f));

  const rows: Array<Record<string, string | number>> = [];
  const runs: Record<string, number[]> = { photoMeta: [], 'sharp metadata()': [], avMeta: [], 'ffprobe loop': [] };
  for (let r = 0; r < RUNS; r++) {
    runs.photoMeta.push(await perSecond(photos, (f) => photoMeta(f)));
    runs['sharp metadata()'].push(await perSecond(photos, (f) => sharp(f, { limitInputPixels: false }).metadata()));
    runs.avMeta.push(await perSecond(songs, (f) => avMeta(f, never)));
    const t0 = performance.now();
    spawnSync('sh', ['-c', `for f in ${d.dir}/*.mp3; do ffprobe -v error -print_format json -show_format "$f" >/dev/null; done`]);
    runs['ffprobe loop'].push(songs.length / ((performance.now() - t0) / 1000));
  }
  for (const [what, xs] of Object.entries(runs)) rows.push({ what, 'files/s (median)': median(xs).toFixed(1), runs: xs.map((x) => x.toFixed(1)).join(' ') });
  table(`metadata reads, ${FILES} files each (4000 × 3000 JPEGs of ${photo.length} bytes; 30 s MP3s)`, rows);

  const db = new Database(join(d.dir, 'fts.db'));
  db.exec(`CREATE VIRTUAL TABLE search_fts USING fts5(name, body, tokenize = 'trigram')`);
  const ins = db.prepare('INSERT INTO search_fts (rowid, name) VALUES (?, ?)');
  db.transaction(() => {
    for (let i = 1; i <= NAMES; i++) ins.run(i, `IMG_${String(i).padStart(6, '0')} holiday ${i % 977}.jpg`);
  })();
  const t0 = performance.now();
  db.exec(`BEGIN;
CREATE VIRTUAL TABLE search_fts_next USING fts5(name, body, meta, tokenize = 'trigram');
INSERT INTO search_fts_next (rowid, name, body) SELECT rowid, name, body FROM search_fts;
DROP TABLE search_fts;
ALTER TABLE search_fts_next RENAME TO search_fts;
COMMIT`);
  table('FTS5 rebuild of the migration', [{ names: NAMES, seconds: ((performance.now() - t0) / 1000).toFixed(2) }]);
  db.close();
} finally {
  d.cleanup();
}
