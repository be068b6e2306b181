/**
 * Local-only cases: the root guard, the 0755 root, symlink containment, bad
 * names, and a root folder that disappears while in use.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, readdirSync, readFileSync, readSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { Readable } from 'node:stream';
import { isAppError, type ErrorCode } from '../../../errors';
import { tempDir } from '../../../../test/helpers/tools';
import { resolveConfig } from '../../config';
import { localDriver } from '.';
import type { StorageDriver } from '../../types';

const ctx = { stateDir: '/nonexistent', uid: 'test' };
const code = (c: ErrorCode) => (e: unknown) => {
  assert.ok(isAppError(e), `expected AppError ${c}, got ${String(e)}`);
  assert.equal(e.code, c, `expected ${c}, got ${e.code} ${JSON.stringify(e.params)}`);
  return true;
};
const collect = async (it: AsyncIterable<{ name: string }>) => {
  const out: string[] = [];
  for await (const e of it) out.push(e.name);
  return out.sort();
};
const body = (s: string) => Readable.from([Buffer.from(s)]);

let tmp: ReturnType<typeof tempDir>;
let d: StorageDriver;
let outside: string;

before(async () => {
  tmp = tempDir('filedock-local-');
  outside = `${tmp.dir}/outside`;
  mkdirSync(outside);
  writeFileSync(`${outside}/secret.txt`, 'secret');
  d = await localDriver.create({ path: `${tmp.dir}/root` }, ctx);
  mkdirSync(`${tmp.dir}/root/inner`);
  writeFileSync(`${tmp.dir}/root/inner/ok.txt`, 'ok');
  symlinkSync(outside, `${tmp.dir}/root/escape-dir`);
  symlinkSync(`${outside}/secret.txt`, `${tmp.dir}/root/escape-file`);
  symlinkSync(`${tmp.dir}/root/inner`, `${tmp.dir}/root/inner-link`);
  symlinkSync(`${tmp.dir}/nowhere`, `${tmp.dir}/root/dangling`);
});
after(async () => {
  await d.close();
  tmp.cleanup();
});

test('the root folder is created with mode 0755', () => {
  assert.equal(statSync(`${tmp.dir}/root`).mode & 0o777, 0o755);
});

test('root guard: relative, /, .. and a symlink to / are refused', async () => {
  for (const path of ['/', 'relative/dir', '/srv/../etc', '', '//']) {
    const problems = resolveConfig(localDriver, { path }).problems;
    assert.ok(problems.length > 0, `accepted ${JSON.stringify(path)}`);
    await assert.rejects(
      Promise.resolve().then(() => localDriver.create({ path }, ctx)),
      code('validation_failed'),
    );
  }
  assert.deepEqual(resolveConfig(localDriver, { root: `${tmp.dir}/x` }).problems, []);
  symlinkSync('/', `${tmp.dir}/to-slash`);
  await assert.rejects(
    Promise.resolve().then(() => localDriver.create({ path: `${tmp.dir}/to-slash` }, ctx)),
    code('validation_failed'),
  );
  writeFileSync(`${tmp.dir}/a-file`, '');
  await assert.rejects(
    Promise.resolve().then(() => localDriver.create({ path: `${tmp.dir}/a-file` }, ctx)),
    code('validation_failed'),
  );
});

test('a symlink leading outside can be neither listed, read, written, nor deleted through', async () => {
  assert.deepEqual(await collect(d.list('')), ['inner', 'inner-link']);
  await assert.rejects(d.read('escape-file'), code('permission_denied'));
  await assert.rejects(d.read('escape-dir/secret.txt'), code('permission_denied'));
  await assert.rejects(d.stat('escape-dir'), code('permission_denied'));
  await assert.rejects(collect(d.list('escape-dir')), code('permission_denied'));
  await assert.rejects(d.write('escape-dir/new.txt', body('x')), code('permission_denied'));
  await assert.rejects(d.write('escape-file', body('x')), code('permission_denied'));
  await assert.rejects(d.mkdir('escape-dir/sub'), code('permission_denied'));
  await assert.rejects(d.delete('escape-dir/secret.txt'), code('permission_denied'));
  await assert.rejects(d.delete('escape-dir'), code('permission_denied'));
  await assert.rejects(d.move!('escape-file', 'taken.txt', { overwrite: false }), code('permission_denied'));
  await assert.rejects(d.copy!('escape-dir', 'stolen', { overwrite: false }), code('permission_denied'));
  await assert.rejects(d.localPath!('escape-file'), code('permission_denied'));
  await assert.rejects(d.read('dangling'), code('permission_denied'));
  assert.equal(readFileSync(`${outside}/secret.txt`, 'utf8'), 'secret');
  assert.equal(existsSync(`${outside}/new.txt`), false);
  assert.equal(existsSync(`${outside}/sub`), false);
});

test('a symlink that stays inside is followed, and deleting it removes the link only', async () => {
  assert.equal((await d.stat('inner-link/ok.txt')).size, 2);
  assert.deepEqual(await collect(d.list('inner-link')), ['ok.txt']);
  await d.write('inner-link/new.txt', body('new'));
  assert.equal(readFileSync(`${tmp.dir}/root/inner/new.txt`, 'utf8'), 'new');
  symlinkSync(`${tmp.dir}/root/inner`, `${tmp.dir}/root/second-link`);
  await d.delete('second-link');
  assert.equal(existsSync(`${tmp.dir}/root/inner/ok.txt`), true);
  assert.equal(existsSync(`${tmp.dir}/root/second-link`), false);
});

test('bad paths and names are refused with clear errors', async () => {
  await assert.rejects(d.stat('../outside'), code('bad_path'));
  await assert.rejects(d.read('inner/../../outside/secret.txt'), code('bad_path'));
  await assert.rejects(d.write('bad\u0000name', body('x')), code('bad_path'));
  await assert.rejects(d.write('bad\u0007name', body('x')), code('name_not_allowed'));
  await assert.rejects(d.write('x'.repeat(256), body('x')), code('name_too_long'));
  await assert.rejects(d.delete(''), code('permission_denied'));
  await assert.rejects(d.read('inner'), code('conflict'));
});

test('a root folder deleted while in use gives storage_unavailable, not a crash', async () => {
  const t = tempDir('filedock-local-gone-');
  const gone = await localDriver.create({ path: `${t.dir}/root` }, ctx);
  await gone.mkdir('a/b');
  rmSync(`${t.dir}/root`, { recursive: true });
  await assert.rejects(gone.stat('a'), code('storage_unavailable'));
  await assert.rejects(collect(gone.list('')), code('storage_unavailable'));
  await assert.rejects(gone.write('a/f.txt', body('x')), code('storage_unavailable'));
  await assert.rejects(collect(gone.walk!('')), code('storage_unavailable'));
  await gone.close();
  t.cleanup();
});

test('a read buffers what the file or range needs, at most 1 MiB at a time (small copies must not churn 1 MiB buffers)', async () => {
  writeFileSync(`${tmp.dir}/root/small.bin`, Buffer.alloc(4096, 1));
  writeFileSync(`${tmp.dir}/root/big.bin`, Buffer.alloc(3 * 1024 * 1024, 2));
  const hwm = async (rel: string, range?: { start: number; end: number }) => {
    const s = await d.read(rel, range);
    let n = 0;
    for await (const c of s) n += (c as Buffer).length;
    return { hwm: s.readableHighWaterMark, n };
  };
  assert.deepEqual(await hwm('small.bin'), { hwm: 64 * 1024, n: 4096 });
  assert.deepEqual(await hwm('big.bin'), { hwm: 1024 * 1024, n: 3 * 1024 * 1024 });
  assert.deepEqual(await hwm('big.bin', { start: 10, end: 200_009 }), { hwm: 200_000, n: 200_000 });
});

test('statLocal with open: a file inside comes opened (no second lookup to send it); outside, a folder, a FIFO or a missing file leave nothing open', {
  skip: process.platform !== 'linux' && 'needs /proc/self/fd',
}, async () => {
  const fds = () => readdirSync('/proc/self/fd').length;
  const before = fds();
  // Written just now: too fresh to be kept in memory (local.small-files.ts), so it comes as a descriptor.
  writeFileSync(`${tmp.dir}/root/inner/ok.txt`, 'ok');
  const got = await d.statLocal!('inner/ok.txt', { open: true });
  assert.equal(got.entry.size, 2);
  assert.equal(got.path, realpathSync(`${tmp.dir}/root/inner/ok.txt`));
  assert.equal(typeof got.fd, 'number', 'the file comes with its descriptor');
  const buf = Buffer.alloc(2);
  readSync(got.fd!, buf, 0, 2, 0);
  assert.equal(buf.toString(), 'ok');
  closeSync(got.fd!);
  // Through a symlink that stays inside: opened, named by its real path.
  const viaLink = await d.statLocal!('inner-link/ok.txt', { open: true });
  assert.equal(viaLink.path, got.path);
  closeSync(viaLink.fd!);
  execFileSync('mkfifo', [`${tmp.dir}/root/pipe`]);
  await assert.rejects(d.statLocal!('escape-file', { open: true }), code('permission_denied'));
  await assert.rejects(d.statLocal!('escape-dir/secret.txt', { open: true }), code('permission_denied'));
  await assert.rejects(d.statLocal!('missing.txt', { open: true }), code('not_found'));
  await assert.rejects(d.statLocal!('pipe', { open: true }), code('not_found'));
  const dir = await d.statLocal!('inner', { open: true });
  assert.equal(dir.entry.type, 'dir');
  assert.equal(dir.fd, undefined);
  assert.equal(fds(), before, 'no descriptor left open');
});

test('a write given fromFile moves that file into place (same inode, no copy); when it cannot, the body is written', async () => {
  const staged = `${tmp.dir}/staged.part`;
  writeFileSync(staged, 'moved bytes');
  const ino = statSync(staged).ino;
  const e = await d.write('inner/moved.txt', body('moved bytes'), { fromFile: staged });
  assert.equal(e.size, 11);
  const st = statSync(`${tmp.dir}/root/inner/moved.txt`);
  assert.equal(st.ino, ino, 'renamed into place');
  assert.equal(st.mode & 0o777, 0o644);
  assert.ok(!existsSync(staged), 'the staged file is given up');
  // A staged file that is not there (or on another filesystem): the body is streamed as always.
  await d.write('inner/streamed.txt', body('from the body'), { fromFile: `${tmp.dir}/gone.part` });
  assert.equal(readFileSync(`${tmp.dir}/root/inner/streamed.txt`, 'utf8'), 'from the body');
  assert.deepEqual(
    readdirSync(`${tmp.dir}/root/inner`).filter((n) => n.startsWith('.')),
    [],
    'no temp file left',
  );
});
