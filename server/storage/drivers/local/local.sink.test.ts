import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tempDir } from '../../../../test/helpers/tools';
import { fileSink } from './local.sink';

test('chunks of any size land whole and in order from the start offset; past 32 MiB the disk is flushed on the way', async () => {
  const t = tempDir('filedock-sink-');
  try {
    const path = join(t.dir, 'f');
    const fh = await open(path, 'w+');
    await fh.write(Buffer.from('head'), 0, 4, 0);
    // SFTP-sized, socket-sized, tiny and larger-than-a-batch chunks, 40 MiB in all.
    const sizes = [32 * 1024, 64 * 1024, 7, 3 * 1024 * 1024 + 5];
    const chunks: Buffer[] = [];
    for (let n = 0, i = 0; n < 40 * 1024 * 1024; i++) {
      const c = randomBytes(sizes[i % sizes.length]);
      chunks.push(c);
      n += c.length;
    }
    let flushes = 0;
    const datasync = fh.datasync.bind(fh);
    fh.datasync = () => {
      flushes++;
      return datasync();
    };
    await pipeline(Readable.from(chunks), fileSink(fh, 4));
    await fh.close();
    assert.ok(readFileSync(path).equals(Buffer.concat([Buffer.from('head'), ...chunks])));
    assert.equal(flushes, 1, 'one background flush for 40 MiB (every 32 MiB)');
  } finally {
    t.cleanup();
  }
});

test('a failed write fails the pipeline, whether it was batched or held until the end', async () => {
  const t = tempDir('filedock-sink-');
  try {
    const fh = await open(join(t.dir, 'f'), 'w+');
    await fh.close();
    // A closed handle refuses every write: the batch's write fails and the pipeline with it.
    await assert.rejects(pipeline(Readable.from([Buffer.alloc(2 * 1024 * 1024)]), fileSink(fh)), /closed|EBADF/);
    await assert.rejects(pipeline(Readable.from([Buffer.alloc(10)]), fileSink(fh)), /closed|EBADF/, 'a small write fails at the end, not silently');
  } finally {
    t.cleanup();
  }
});
