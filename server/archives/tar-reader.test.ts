import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { needTool, tempDir } from '../../test/helpers/tools';
import { isTarName, listTar } from './tar-reader';

const skip = needTool('tar', 'tar') ?? false;
const isError = (code: string, reason?: RegExp) => (e: unknown) => {
  const err = e as { code?: string; details?: { reason?: string } };
  assert.equal(err.code, code);
  if (reason) assert.match(String(err.details?.reason), reason);
  return true;
};

describe('tar listing', { skip }, () => {
  let dir: string;
  let cleanup: () => void;
  const long = `${'deep-folder-name/'.repeat(8)}a file with a long name ü.txt`;
  const tar = (name: string, ...args: string[]) => {
    execFileSync('tar', ['-c', '-f', join(dir, name), ...args, '-C', join(dir, 'src'), '.']);
    return join(dir, name);
  };
  const list = (file: string, o: { gzip?: boolean; maxBytes?: number } = {}) => listTar(createReadStream(file), { gzip: !!o.gzip, maxBytes: o.maxBytes ?? 0 });

  before(() => {
    ({ dir, cleanup } = tempDir('filedock-tar-'));
    mkdirSync(join(dir, 'src/sub'), { recursive: true });
    writeFileSync(join(dir, 'src/a.txt'), 'alpha\n'.repeat(1000));
    writeFileSync(join(dir, 'src/sub/b.bin'), Buffer.alloc(513, 1));
    mkdirSync(join(dir, 'src', long, '..'), { recursive: true });
    writeFileSync(join(dir, 'src', long), 'x');
    symlinkSync('a.txt', join(dir, 'src/link'));
    utimesSync(join(dir, 'src/a.txt'), 1_700_000_000, 1_700_000_000);
  });
  after(() => cleanup());

  for (const format of ['gnu', 'pax', 'ustar'] as const) {
    test(`${format}: names, sizes, folders, symlinks, times, in archive order`, async () => {
      // ustar cannot hold the long name: that archive is made without it.
      const file = format === 'ustar' ? tar('u.tar', `--format=ustar`, '--exclude=deep-folder-name') : tar(`${format}.tar`, `--format=${format}`);
      const entries = await list(file);
      const byName = new Map(entries.map((e) => [e.name, e]));
      assert.deepEqual(byName.get('a.txt'), { name: 'a.txt', size: 6000, is_dir: false, symlink: false, modified: '2023-11-14T22:13:20.000Z' });
      assert.equal(byName.get('sub/b.bin')?.size, 513);
      assert.equal(byName.get('sub/')?.is_dir, true);
      assert.equal(byName.get('link')?.symlink, true);
      if (format !== 'ustar') assert.equal(byName.get(long)?.size, 1, `long name read (${format})`);
      const names = execFileSync('tar', ['-t', '-f', file], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .map((n) => n.replace(/^\.\//, ''))
        .filter((n) => n !== '' && n !== '.');
      assert.deepEqual(
        entries.map((e) => e.name),
        names,
      );
    });
  }

  test('tar.gz is gunzipped; a limit on the inflated stream refuses a gzip bomb', async () => {
    const file = tar('z.tar.gz', '-z');
    const entries = await list(file, { gzip: true });
    assert.ok(entries.some((e) => e.name === 'a.txt' && e.size === 6000));
    writeFileSync(join(dir, 'src/zeros.bin'), Buffer.alloc(4 * 1024 * 1024));
    const bomb = tar('bomb.tgz', '-z');
    assert.ok(readFileSync(bomb).length < 64 * 1024, 'the archive itself is small');
    await assert.rejects(list(bomb, { gzip: true, maxBytes: 1024 * 1024 }), isError('archive_too_large'));
    assert.ok((await list(bomb, { gzip: true, maxBytes: 8 * 1024 * 1024 })).some((e) => e.name === 'zeros.bin'));
  });

  test('not a tar, a broken checksum, a truncated archive and broken gzip are archive_invalid', async () => {
    const file = tar('t.tar');
    const bytes = readFileSync(file);
    const from = (b: Buffer, gzip = false) => listTar(Readable.from([b]), { gzip, maxBytes: 0 });
    await assert.rejects(from(Buffer.from('just some text, definitely not a tar archive'.repeat(20))), isError('archive_invalid', /not a tar/));
    const bad = Buffer.from(bytes);
    bad[0] ^= 0x01;
    await assert.rejects(from(bad), isError('archive_invalid', /not a tar/));
    await assert.rejects(from(bytes.subarray(0, 1024 + 100)), isError('archive_invalid', /truncated/));
    await assert.rejects(from(gzipSync(bytes).subarray(0, 200), true), isError('archive_invalid'));
    assert.ok((await from(bytes)).length > 3, 'the intact bytes list');
  });

  test('names that count as tar', () => {
    assert.deepEqual(['a.tar', 'b.TAR.GZ', 'c.tgz', 'd.zip', 'e.tar.bz2', 'tar'].map(isTarName), [true, true, true, false, false, false]);
  });
});
