// Over 60 s in CI (test-timings.json; issue 37): every driver call runs an smbclient process (RECIPES.md), and smbd is stopped and started.
/**
 * The smb driver against a real smbd on a loopback port (test/helpers/smbd).
 * Needs apt packages samba and smbclient.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { isAppError } from '../../server/errors';
import { createSmbDriver, smbDriver } from '../../server/storage/drivers/smb';
import type { StorageDriver } from '../../server/storage/types';
import { needTool, tempDir } from '../helpers/tools';
import { startSmbd, type Smbd } from '../helpers/smbd';
import { driverConformance } from './conformance';

const skip = needTool('smbd', 'samba') ?? needTool('smbclient', 'smbclient') ?? undefined;

const code = (c: string) => (e: unknown) => isAppError(e) && e.code === c;
const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('smb driver', { skip }, () => {
  let smbd: Smbd;
  let state: { dir: string; cleanup: () => void };
  let driver: StorageDriver;
  const make = (over: Record<string, unknown> = {}) =>
    createSmbDriver(
      { host: smbd.host, port: smbd.port, share: smbd.share, user: smbd.user, password: smbd.password, ...over },
      { stateDir: state.dir, uid: `u${Math.random().toString(36).slice(2)}` },
      { commandMs: 5000, idleMs: 3000 },
    );

  before(async () => {
    smbd = await startSmbd();
    state = tempDir('filedock-smb-state-');
    driver = make({ root: 'base' });
    await make().mkdir('base');
  });
  after(async () => {
    await driver?.close();
    await smbd?.destroy();
    state?.cleanup();
  });

  test('round trip under the root: names with spaces and accents, listing, ranges, walk, move, delete', async () => {
    await driver.mkdir('déjà vu/sub folder');
    await driver.mkdir('déjà vu/sub folder');
    const e = await driver.write('déjà vu/sub folder/hello wörld.txt', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    assert.deepEqual([e.name, e.type, e.size], ['hello wörld.txt', 'file', 11]);
    assert.equal(readFileSync(join(smbd.shareDir, 'base/déjà vu/sub folder/hello wörld.txt'), 'utf8'), 'hello world');
    assert.deepEqual(
      (await collect(driver.list('déjà vu'))).map((x) => [x.name, x.type]),
      [['sub folder', 'dir']],
    );
    assert.equal(await text(await driver.read('déjà vu/sub folder/hello wörld.txt')), 'hello world');
    assert.equal(await text(await driver.read('déjà vu/sub folder/hello wörld.txt', { start: 6, end: 8 })), 'wor');
    assert.equal(await text(await driver.read('déjà vu/sub folder/hello wörld.txt', { start: 6 })), 'world');
    const walked = (await collect(driver.walk!('déjà vu'))).map((x) => `${x.type}:${x.path}`).sort();
    assert.deepEqual(walked, ['dir:sub folder', 'file:sub folder/hello wörld.txt']);
    assert.equal((await driver.stat('')).type, 'dir');

    await driver.move!('déjà vu/sub folder/hello wörld.txt', 'déjà vu/moved.txt', { overwrite: false });
    await driver.write('déjà vu/other.txt', Readable.from(['x']));
    await assert.rejects(driver.move!('déjà vu/other.txt', 'déjà vu/moved.txt', { overwrite: false }), code('conflict'));
    await assert.rejects(driver.write('déjà vu/moved.txt', Readable.from(['y']), { overwrite: false }), code('conflict'));
    await driver.write('déjà vu/moved.txt', Readable.from(['replaced']));
    assert.equal(await text(await driver.read('déjà vu/moved.txt')), 'replaced');
    await driver.delete('déjà vu');
    await assert.rejects(driver.stat('déjà vu'), code('not_found'));
    await assert.rejects(driver.delete('déjà vu'), code('not_found'));
  });

  test("the conformance suite's special names that SMB allows round-trip", async () => {
    await driver.mkdir('dir #% ü 日本');
    const names = ['with space.txt', 'çğüşöı 日本.txt', 'hash#1.txt', 'pct%20.txt', `${'長'.repeat(12)} long.txt`];
    for (const n of names) await driver.write(`dir #% ü 日本/${n}`, Readable.from([n]));
    assert.deepEqual((await collect(driver.list('dir #% ü 日本'))).map((e) => [e.name, e.size]).sort(), names.map((n) => [n, Buffer.byteLength(n)]).sort());
    await driver.delete('dir #% ü 日本');
  });

  test('missing paths are not_found: stat, list, read, a write into a missing folder', async () => {
    await assert.rejects(driver.stat('nope.txt'), code('not_found'));
    await assert.rejects(collect(driver.list('nope')), code('not_found'));
    await assert.rejects(driver.read('nope.txt'), code('not_found'));
    await assert.rejects(driver.write('nope/a.txt', Readable.from(['x'])), code('not_found'));
    await driver.write('plain.txt', Readable.from(['x']));
    await assert.rejects(collect(driver.list('plain.txt')), code('not_found'));
  });

  test('names smbclient cannot carry are refused before any command runs', async () => {
    for (const name of ['a;b.txt', 'x";del "plain.txt', 'star*.txt', 'colon:.txt', 'trailing.']) {
      await assert.rejects(driver.write(name, Readable.from(['x'])), code('name_not_allowed'), name);
      await assert.rejects(driver.mkdir(`dir/${name}`), code('name_not_allowed'), name);
    }
    assert.ok(readdirSync(join(smbd.shareDir, 'base')).every((n) => !/[;"*:]/.test(n)));
    assert.equal(statSync(join(smbd.shareDir, 'base/plain.txt')).size, 1);
  });

  test('a body that fails mid-upload leaves neither the target nor a temp file', async () => {
    await driver.write('keep.txt', Readable.from(['old']));
    const failing = new Readable({ read() {} });
    failing.push(Buffer.alloc(64 * 1024, 1));
    setTimeout(() => failing.destroy(new Error('client went away')), 100);
    await assert.rejects(driver.write('keep.txt', failing));
    assert.equal(readFileSync(join(smbd.shareDir, 'base/keep.txt'), 'utf8'), 'old');
    assert.deepEqual(
      readdirSync(join(smbd.shareDir, 'base')).filter((n) => n.startsWith('.~fd-')),
      [],
    );
  });

  test('credentials live in a 0600 auth file, and a wrong password is storage_unreachable', async () => {
    const bad = make({ password: 'wrong' });
    await assert.rejects(
      bad.stat(''),
      (e) => code('storage_unreachable')(e) && /LOGON_FAILURE/.test(String((e as { params: { reason: string } }).params.reason)),
    );
    const files = readdirSync(join(state.dir, 'smb'));
    assert.ok(files.length > 0);
    for (const f of files) assert.equal(statSync(join(state.dir, 'smb', f)).mode & 0o777, 0o600);
    await bad.close();
  });

  test('a closed port and a missing share are storage_unreachable', async () => {
    await assert.rejects(make({ port: 1 }).stat(''), code('storage_unreachable'));
    await assert.rejects(make({ share: 'nosuch' }).stat(''), code('storage_unreachable'));
  });

  test('a read cut by the server errors the stream instead of ending it cleanly', async () => {
    writeFileSync(join(smbd.shareDir, 'base/big.bin'), Buffer.alloc(32 * 1024 * 1024, 7));
    const stream = await driver.read('big.bin');
    let got = 0;
    const done = new Promise<unknown>((resolve) => {
      stream.on('error', resolve);
      stream.on('end', () => resolve(null));
    });
    stream.once('data', (c: Buffer) => {
      got += c.length;
      stream.pause();
      void smbd.stop().then(() => stream.resume());
    });
    stream.on('data', (c: Buffer) => (got += c.length));
    const err = await done;
    await smbd.start();
    assert.ok(code('storage_unreachable')(err), `expected storage_unreachable, got ${String(err)} after ${got} bytes`);
  });

  test('a server that goes away mid-upload: storage_unreachable, and no partial file shows afterwards', async () => {
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(256 * 1024, 2));
    const p = driver.write('dropped.bin', body);
    setTimeout(() => void smbd.stop(), 150);
    await assert.rejects(p, code('storage_unreachable'));
    body.destroy();
    await smbd.start();
    await assert.rejects(driver.stat('dropped.bin'), code('not_found'));
    assert.ok((await collect(driver.list(''))).every((e) => !e.name.startsWith('.~fd-')));
  });

  test('server stopped: storage_unreachable; started again: the same driver recovers', async () => {
    await smbd.stop();
    await assert.rejects(driver.stat(''), code('storage_unreachable'));
    await smbd.start();
    assert.equal((await driver.stat('')).type, 'dir');
    assert.equal(await text(await driver.read('keep.txt')), 'old');
  });
});

if (skip) test('smb conformance', { skip }, () => undefined);
else
  driverConformance(
    'smb conformance',
    async () => {
      const server = await startSmbd();
      const dir = tempDir('filedock-smb-conf-');
      const base = { host: server.host, port: server.port, share: server.share, user: server.user, password: server.password };
      await (await smbDriver.create(base, { stateDir: dir.dir, uid: 'prep' })).mkdir('conformance');
      const driver = await smbDriver.create({ ...base, root: 'conformance' }, { stateDir: dir.dir, uid: 'conformance' });
      return {
        driver,
        async teardown() {
          await driver.close();
          await server.destroy();
          dir.cleanup();
        },
      };
    },
    {
      mtimePrecisionMs: 2000,
      bigFileBytes: 64 * 1024 * 1024,
      skip: { 'special names': "`?` is not a legal SMB name character (the case's folder and one file carry it); see docs/drivers/smb.md" },
    },
  );
