/**
 * `plugin:<driver>` storage drivers: the loader, the supervisor and the
 * example plugin (examples/plugin-driver/localdir.mjs), which also runs the
 * conformance suite. Needs nothing beyond Node.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { isAppError } from '../../server/errors';
import { discoverPlugins, loadPluginDriver, PluginDriver } from '../../server/storage/drivers/plugin';
import type { DriverModule } from '../../server/storage/types';
import { tempDir } from '../helpers/tools';
import { driverConformance } from './conformance';

const EXAMPLE = resolve('examples/plugin-driver/localdir.mjs');
const VERSION = '0.1.0';
const fast = { callMs: 3000, startMs: 3000, backoffMs: 50, maxBackoffMs: 400 };

const code = (c: string, reason?: string) => (e: unknown) => isAppError(e) && e.code === c && (reason === undefined || e.params.reason === reason);

describe('plugin drivers', () => {
  let tmp: { dir: string; cleanup: () => void };
  let mod: DriverModule;
  /** A variant of the example with one line changed, written into the temp dir. */
  const variant = (name: string, from: string, to: string) => {
    const p = join(tmp.dir, name);
    const src = readFileSync(EXAMPLE, 'utf8');
    assert.ok(src.includes(from), `example contains ${from}`);
    writeFileSync(p, src.replace(from, to));
    return p;
  };
  const script = (name: string, body: string) => {
    const p = join(tmp.dir, name);
    writeFileSync(p, body);
    return p;
  };

  before(async () => {
    tmp = tempDir('filedock-plugin-');
    mod = await loadPluginDriver(EXAMPLE, { serviceVersion: VERSION, timeouts: fast });
  });
  after(() => tmp?.cleanup());

  test('the handshake yields a descriptor: plugin:<name>, fields with root, carried capabilities only', () => {
    const d = mod.descriptor;
    assert.equal(d.driver, 'plugin:localdir');
    assert.deepEqual(
      d.fields.map((f) => [f.key, f.type, f.required, f.root]),
      [['path', 'string', true, true]],
    );
    assert.equal(d.capabilities.copy, true);
    assert.equal(d.capabilities.ranges, true);
    assert.equal(d.capabilities.presign, false);
    assert.equal(d.capabilities.watch, false);
    assert.deepEqual(mod.validate!({}), [{ field: 'path', message: 'required' }]);
  });

  test('a plugin whose service_range excludes this version is refused', async () => {
    await assert.rejects(loadPluginDriver(EXAMPLE, { serviceVersion: '1.0.0', timeouts: fast }), code('unsupported', 'service_range'));
    const future = variant('future.mjs', "const SERVICE_RANGE = '>=0.1.0 <1.0.0';", "const SERVICE_RANGE = '>=9.0.0';");
    await assert.rejects(loadPluginDriver(future, { serviceVersion: VERSION, timeouts: fast }), code('unsupported', 'service_range'));
    const otherProtocol = variant('v2.mjs', "const PROTOCOL = 'filedock-storage/1';", "const PROTOCOL = 'filedock-storage/2';");
    await assert.rejects(loadPluginDriver(otherProtocol, { serviceVersion: VERSION, timeouts: fast }), code('unsupported'));
  });

  test('a program that is not a plugin fails to load with a clear error and no leftover process', async () => {
    const chatty = script('chatty.mjs', "console.log('hello, I am not JSON'); setInterval(() => {}, 1000);");
    await assert.rejects(
      loadPluginDriver(chatty, { serviceVersion: VERSION, timeouts: fast }),
      (e) => code('storage_unreachable')(e) && /not JSON/.test(String((e as { params: { reason: string } }).params.reason)),
    );
    const silent = script('silent.mjs', 'setInterval(() => {}, 1000);');
    await assert.rejects(
      loadPluginDriver(silent, { serviceVersion: VERSION, timeouts: { ...fast, startMs: 300 } }),
      code('storage_unreachable', 'plugin call timed out'),
    );
    const dies = script('dies.mjs', "process.stderr.write('boom'); process.exit(3);");
    await assert.rejects(
      loadPluginDriver(dies, { serviceVersion: VERSION, timeouts: fast }),
      (e) => code('storage_unreachable')(e) && /boom/.test(String((e as { params: { reason: string } }).params.reason)),
    );
  });

  test('a bad config is refused by the plugin on first use', async () => {
    const driver = await mod.create({ path: 'relative/path' }, { stateDir: tmp.dir, uid: 'bad' });
    await assert.rejects(driver.stat(''), code('validation_failed'));
    await driver.close();
  });

  test('a crashed plugin fails the calls in flight and is restarted on the next call', async () => {
    const root = join(tmp.dir, 'crash-root');
    const driver = (await mod.create({ path: root }, { stateDir: tmp.dir, uid: 'crash' })) as PluginDriver;
    await driver.write('big.bin', Readable.from([Buffer.alloc(8 * 1024 * 1024, 3)]));
    const stream = await driver.read('big.bin');
    const failed = new Promise<unknown>((res) => {
      stream.once('error', res);
      stream.once('end', () => res(null));
    });
    // Take one chunk and stop pulling: the plugin waits for credit, the call stays in flight.
    await new Promise<void>((res) => stream.once('readable', () => res()));
    const first = driver.pid;
    assert.ok(first);
    process.kill(first, 'SIGKILL');
    assert.ok(code('storage_unreachable')(await failed));
    assert.equal((await driver.stat('big.bin')).size, 8 * 1024 * 1024);
    assert.notEqual(driver.pid, first);
    assert.equal(await text(await driver.read('big.bin', { start: 0, end: 3 })), '\x03\x03\x03\x03');
    await driver.close();
    await assert.rejects(driver.stat(''), code('storage_unreachable'));
  });

  test('long listings arrive in entries batches ahead of the reply', async () => {
    const root = join(tmp.dir, 'many-root');
    mkdirSync(join(root, 'sub'), { recursive: true });
    for (let i = 0; i < 2500; i++) writeFileSync(join(root, 'sub', `f${i}`), '');
    const driver = await mod.create({ path: root }, { stateDir: tmp.dir, uid: 'many' });
    const listed: string[] = [];
    for await (const e of driver.list('sub')) listed.push(e.name);
    assert.equal(new Set(listed).size, 2500);
    let walked = 0;
    for await (const e of driver.walk!('')) walked += e.path.startsWith('sub/') ? 1 : 0;
    assert.equal(walked, 2500);
    await driver.close();
  });

  test('discovery loads every plugin in a folder and reports the bad ones', async () => {
    const dir = join(tmp.dir, 'plugins');
    mkdirSync(join(dir, 'folder-plugin'), { recursive: true });
    writeFileSync(join(dir, 'folder-plugin', 'index.mjs'), readFileSync(EXAMPLE, 'utf8').replace("name: 'localdir'", "name: 'otherdir'"));
    writeFileSync(join(dir, 'a-localdir.mjs'), readFileSync(EXAMPLE));
    writeFileSync(join(dir, 'b-duplicate.mjs'), readFileSync(EXAMPLE));
    writeFileSync(join(dir, 'notes.txt'), 'not a plugin');
    writeFileSync(join(dir, 'broken.sh'), '#!/bin/sh\nexit 1\n');
    chmodSync(join(dir, 'broken.sh'), 0o755);
    const found = await discoverPlugins(dir, { serviceVersion: VERSION, timeouts: fast });
    assert.deepEqual(found.modules.map((m) => m.descriptor.driver).sort(), ['plugin:localdir', 'plugin:otherdir']);
    assert.deepEqual(found.failures.map((f) => [f.program.slice(dir.length + 1), f.error.code]).sort(), [
      ['b-duplicate.mjs', 'conflict'],
      ['broken.sh', 'storage_unreachable'],
    ]);
    assert.deepEqual(await discoverPlugins(join(tmp.dir, 'nope'), { serviceVersion: VERSION }), { modules: [], failures: [] });
  });

  test('an aborted write leaves no file and no temp file in the plugin folder', async () => {
    const root = join(tmp.dir, 'abort-root');
    const driver = await mod.create({ path: root }, { stateDir: tmp.dir, uid: 'abort' });
    const ac = new AbortController();
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(100_000, 1));
    const p = driver.write('a.bin', body, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(p, code('cancelled'));
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(readdirSync(root), []);
    await driver.close();
  });
});

driverConformance(
  'plugin conformance (examples/plugin-driver)',
  async () => {
    const tmp = tempDir('filedock-plugin-conf-');
    const mod = await loadPluginDriver(EXAMPLE, { serviceVersion: VERSION });
    const driver = await mod.create({ path: join(tmp.dir, 'root') }, { stateDir: tmp.dir, uid: 'conformance' });
    return {
      driver,
      async teardown() {
        await driver.close();
        tmp.cleanup();
      },
    };
  },
  { bigFileBytes: 64 * 1024 * 1024 },
);
