import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, truncateSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createHash, randomBytes } from 'node:crypto';
import { zipDigests } from '../../test/helpers/zip-read';
import { SidecarStore, ZipFileBuild, entryKey, type CommitPolicy } from './zip-build';
import { tempDir } from '../../test/helpers/tools';

interface Item {
  name: string;
  data: Buffer;
  mtime: number;
}

const EVERY_5: CommitPolicy = { entries: 5, bytes: 2 ** 40, ms: 1e9 };

function items(n: number): Item[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `d/f${i}.${i % 2 ? 'bin' : 'txt'}`,
    data: i % 2 ? randomBytes(3000 + i) : Buffer.from(`line ${i}\n`.repeat(400 + i)),
    mtime: Date.UTC(2024, 0, 1 + i),
  }));
}
const key = (it: Item) => entryKey(it.name, 'file', it.data.length, it.mtime);

/** Adds items[from..to) to the build (deflating the .txt ones). */
async function add(b: ZipFileBuild, list: Item[], from: number, to = list.length): Promise<void> {
  for (const it of list.slice(from, to))
    await b.addFile(key(it), it.name, Readable.from([it.data]), { size: it.data.length, mtime: it.mtime, compress: it.name.endsWith('.txt') });
}

async function fresh(file: string, list: Item[]): Promise<Buffer> {
  const b = await ZipFileBuild.open(file, null, list.map(key), { policy: null });
  await add(b, list, 0);
  await b.finish();
  return readFileSync(file);
}

const digests = (list: Item[]) => new Map(list.map((it) => [it.name, createHash('sha256').update(it.data).digest('hex')]));

test('a build cut after its last checkpoint goes on from it: garbage past the checkpoint is cut, the result equals a build from zero', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const list = items(40);
    const temp = join(dir, 'a.zip.part');
    const store = new SidecarStore(`${temp}.idx`);
    const first = await ZipFileBuild.open(temp, store, list.map(key), { policy: EVERY_5 });
    await add(first, list, 0, 23);
    await first.close(); // the crash: entries 20..22 were written but not checkpointed
    appendFileSync(temp, randomBytes(5000)); // and a torn write after them
    const cp = store.load()!;
    assert.equal(cp.entries.length, 20);
    assert.ok(readFileSync(temp).length > cp.length);
    const prefix = readFileSync(temp).subarray(0, cp.length);

    const second = await ZipFileBuild.open(temp, store, list.map(key), { policy: EVERY_5 });
    assert.deepEqual(second.resumed, { entries: 20, bytes: cp.length });
    await add(second, list, 20);
    await second.finish();
    const resumed = readFileSync(temp);
    assert.ok(resumed.subarray(0, cp.length).equals(prefix), 'the committed bytes are kept as they were');
    assert.ok(resumed.equals(await fresh(join(dir, 'b.zip'), list)), 'byte-identical to a build from zero');
    assert.deepEqual(await zipDigests(temp), digests(list));
  } finally {
    cleanup();
  }
});

test('a committed source that changed cuts the archive at that entry; a temp shorter than its checkpoint starts over', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const list = items(30);
    const temp = join(dir, 'a.zip.part');
    const store = new SidecarStore(`${temp}.idx`);
    const b1 = await ZipFileBuild.open(temp, store, list.map(key), { policy: EVERY_5 });
    await add(b1, list, 0, 17);
    await b1.close();
    const changed = list.map((it, i) => (i === 7 ? { ...it, data: Buffer.from('changed'), mtime: it.mtime + 1000 } : it));
    const b2 = await ZipFileBuild.open(temp, store, changed.map(key), { policy: EVERY_5 });
    assert.equal(b2.resumed.entries, 7, 'kept up to the changed entry');
    assert.equal(store.load()!.entries.length, 7, 'the checkpoint was cut before anything new was written');
    await add(b2, changed, 7, 12);
    await b2.close();
    const b3 = await ZipFileBuild.open(temp, store, changed.map(key), { policy: EVERY_5 });
    assert.equal(b3.resumed.entries, 12, 'five new entries after the cut made one more checkpoint');
    await add(b3, changed, 12);
    await b3.finish();
    assert.ok(readFileSync(temp).equals(await fresh(join(dir, 'b.zip'), changed)));
    assert.deepEqual(await zipDigests(temp), digests(changed));

    const temp2 = join(dir, 'c.zip.part');
    const store2 = new SidecarStore(`${temp2}.idx`);
    const c1 = await ZipFileBuild.open(temp2, store2, list.map(key), { policy: EVERY_5 });
    await add(c1, list, 0, 12);
    await c1.close();
    truncateSync(temp2, store2.load()!.length - 1);
    const c2 = await ZipFileBuild.open(temp2, store2, list.map(key), { policy: EVERY_5 });
    assert.equal(c2.resumed.entries, 0, 'a short temp is not trusted');
    assert.equal(existsSync(store2.file), false, 'its checkpoints are forgotten before new bytes are written');
    await add(c2, list, 0);
    await c2.finish();
    assert.deepEqual(await zipDigests(temp2), digests(list));
    await c2.discard();
    assert.equal(existsSync(temp2), false);
  } finally {
    cleanup();
  }
});
