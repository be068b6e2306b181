import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, PassThrough } from 'node:stream';
import { needTool, tempDir } from '../../test/helpers/tools';
import { ZipWriter } from '../lib/zip-writer';
import { openZip } from './zip-reader';
import type { RangeSource } from './zip-directory';

const ENTRIES = 70_000;
const skip = needTool('python3', 'python3') ?? false;

/** A ZIP past 65,535 entries (Python writes ZIP64 end records), half deflated. */
function bigZip(): Buffer {
  const { dir, cleanup } = tempDir('filedock-zipreader-');
  try {
    execFileSync('python3', [
      '-c',
      `
import zipfile, sys
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("dir/", "")
    for i in range(${ENTRIES}): z.writestr(f"d{i % 50}/f{i}.txt", f"{i}\\n" * 5, zipfile.ZIP_DEFLATED if i % 2 else zipfile.ZIP_STORED)
`,
      join(dir, 'big.zip'),
    ]);
    return readFileSync(join(dir, 'big.zip'));
  } finally {
    cleanup();
  }
}

/** A small ZIP whose entry had no size when written (ZIP64 extra fields, data descriptor), from ZipWriter. */
async function unsizedZip(): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const zip = new ZipWriter(out);
  await zip.addFile('dir/unsized.txt', Readable.from([Buffer.from('no size given\n')]), { mtime: new Date('2024-05-06T07:08:10Z'), compress: true });
  await zip.finish();
  return Buffer.concat(chunks);
}

/** The bytes served by ranges in small chunks (records cut across chunks), counting the ranged reads. */
function source(bytes: Buffer, chunk = 1000): RangeSource & { reads: number } {
  const s = {
    size: bytes.length,
    reads: 0,
    async read({ start, end }: { start: number; end: number }) {
      s.reads++;
      const span = bytes.subarray(start, end + 1);
      return Readable.from(Array.from({ length: Math.ceil(span.length / chunk) }, (_, i) => span.subarray(i * chunk, (i + 1) * chunk)));
    },
  };
  return s;
}

test('a 70,000-entry ZIP64 directory is read in two ranged reads; entries open through a few 1 MiB block reads', { skip }, async () => {
  const bytes = bigZip();
  const src = source(bytes);
  const zip = await openZip(src);
  assert.equal(src.reads, 2, 'the tail and the whole directory');
  assert.equal(zip.entries.length, ENTRIES + 1);
  assert.equal(zip.entries[0].is_dir, true);
  const before = src.reads;
  // Every 10th entry, across the whole archive: blocks are fetched as the reads move on, not per entry.
  for (const e of zip.entries.filter((_, i) => i % 10 === 1)) {
    const got = Buffer.concat(await (await zip.open(e)).toArray()).toString();
    assert.equal(got, `${/f(\d+)\.txt$/.exec(e.name)![1]}\n`.repeat(5), e.name);
  }
  assert.ok(src.reads - before <= Math.ceil(bytes.length / (1024 * 1024)) + 2, `${src.reads - before} reads for ${ENTRIES / 10} entries`);
  zip.close();
});

test('an entry written without a size reads back; not a ZIP, a truncated directory and an aborted read are refused', async () => {
  const bytes = await unsizedZip();
  const zip = await openZip(source(bytes, 7));
  assert.equal(zip.entries[0].size, 14);
  assert.equal(Buffer.concat(await (await zip.open(zip.entries[0])).toArray()).toString(), 'no size given\n');
  await assert.rejects(
    openZip(source(Buffer.from('just text, no end record here'))),
    (e: any) => e.code === 'archive_invalid' && e.details.reason === 'not_a_zip',
  );
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(openZip(source(bytes), { signal: ac.signal }), (e: any) => e.code === 'cancelled');
  // The directory cut short: the end record's count and offsets cannot be met.
  const cdAt = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  const cut = Buffer.concat([bytes.subarray(0, cdAt + 10), bytes.subarray(bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x06, 0x06])))]);
  await assert.rejects(openZip(source(cut)), (e: any) => e.code === 'archive_invalid');
});
