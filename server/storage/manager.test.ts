import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isAppError, AppError } from '../errors';
import { tempDir } from '../../test/helpers/tools';
import { DriverManager } from './manager';
import { DriverRegistry } from './registry';
import { builtinDrivers } from './drivers';
import { readOnlyDecorator } from './read-only';
import type { DriverDecorator, Entry, StorageDriver } from './types';

/** A stand-in backend whose root listing is scripted: answers, fails, or hangs. */
function scripted(list: () => AsyncIterable<Entry>): StorageDriver & { closed: number } {
  const d = {
    closed: 0,
    stat: () => Promise.reject(new Error('unused')),
    list,
    read: () => Promise.reject(new Error('unused')),
    write: () => Promise.reject(new Error('unused')),
    mkdir: () => Promise.resolve(),
    delete: () => Promise.resolve(),
    async close() {
      d.closed++;
    },
  };
  return d;
}

const manager = () => {
  const r = new DriverRegistry();
  for (const m of builtinDrivers) r.register(m);
  const tmp = tempDir();
  return { m: new DriverManager(r, { secretKey: randomBytes(32), stateDir: tmp.dir }), tmp };
};

const reasonOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (e) {
    assert.ok(isAppError(e) && e.code === 'storage_unreachable', String(e));
    return String(e.params.reason);
  }
  throw new Error('probe succeeded');
};

test('build resolves the config and probe samples the root listing', async () => {
  const { m, tmp } = manager();
  const d = await m.build({ uid: 'u1', driver: 'local', config: { root: `${tmp.dir}/files` } });
  assert.equal(statSync(`${tmp.dir}/files`).isDirectory(), true, 'alias root reached the driver');
  await d.mkdir('a');
  await d.mkdir('b');
  const r = await m.probe(d);
  assert.deepEqual({ ...r, sample_listing: r.sample_listing.sort() }, { sample_listing: ['a', 'b'], object_count: 2 });
  await d.close();
  tmp.cleanup();
});

test('build refuses an unknown driver and a config problem', async () => {
  const { m, tmp } = manager();
  await assert.rejects(m.build({ uid: 'u', driver: 'nfs', config: {} }), (e) => isAppError(e) && e.params.field === 'driver');
  await assert.rejects(m.build({ uid: 'u', driver: 'local', config: { path: '/' } }), (e) => isAppError(e) && e.params.field === 'config.path');
  await assert.rejects(m.build({ uid: 'u', driver: 'local', config: { path: 'rel/dir' } }), (e) => isAppError(e) && e.params.field === 'config.path');
  tmp.cleanup();
});

test('a probe that fails carries the driver message verbatim', async () => {
  const { m } = manager();
  const failing = scripted(async function* () {
    throw new Error('connect ECONNREFUSED 127.0.0.1:1');
  });
  assert.equal(await reasonOf(m.probe(failing)), 'connect ECONNREFUSED 127.0.0.1:1');
  const appFailing = scripted(async function* () {
    throw new AppError('storage_unreachable', { reason: 'host key mismatch' });
  });
  assert.equal(await reasonOf(m.probe(appFailing)), 'host key mismatch');
});

test('a probe that times out says so, with the late error or "no answer"', async () => {
  const { m } = manager();
  const silent = scripted(async function* () {
    await new Promise(() => undefined);
  });
  const t0 = Date.now();
  assert.equal(await reasonOf(m.probe(silent, 200)), 'timed out after 200ms: no answer');
  assert.ok(Date.now() - t0 < 2000);
  const late = scripted(async function* () {
    await new Promise((r) => setTimeout(r, 250));
    throw new Error('handshake failed');
  });
  assert.equal(await reasonOf(m.probe(late, 200)), 'timed out after 200ms: handshake failed');
});

test('install swaps atomically and closes the old driver; remove and closeAll close', async () => {
  const { m } = manager();
  const empty = async function* (): AsyncIterable<Entry> {};
  const a = scripted(empty);
  const b = scripted(empty);
  const c = scripted(empty);
  await m.install(1, a);
  assert.equal(m.get(1), a);
  await m.install(1, b);
  assert.equal(m.get(1), b);
  assert.equal(a.closed, 1);
  assert.equal(b.closed, 0);
  await m.install(2, c);
  await m.remove(1);
  assert.equal(m.get(1), undefined);
  assert.equal(b.closed, 1);
  await m.remove(1);
  await m.closeAll();
  assert.equal(c.closed, 1);
  assert.equal(m.get(2), undefined);
});

test('decorators wrap every built driver in order (first innermost); read-only refuses each change and lets reads through', async () => {
  const r = new DriverRegistry();
  for (const mod of builtinDrivers) r.register(mod);
  const tmp = tempDir();
  const order: string[] = [];
  const tracer = (name: string): DriverDecorator => ({
    name,
    // Everything else is the wrapped driver's own (its prototype's methods included).
    wrap: (d) => Object.assign(Object.create(d) as StorageDriver, { stat: (p: string) => (order.push(name), d.stat(p)) }),
  });
  let readOnly = false;
  const m = new DriverManager(r, {
    secretKey: randomBytes(32),
    stateDir: tmp.dir,
    decorators: [tracer('inner'), readOnlyDecorator(() => readOnly), tracer('outer')],
  });
  const d = await m.build({ uid: 'ro', driver: 'local', config: { path: `${tmp.dir}/files` } });
  await d.write('a.txt', Readable.from([Buffer.from('hello')]), { size: 5 });
  await d.mkdir('dir');
  order.length = 0;
  await d.stat('a.txt');
  assert.deepEqual(order, ['outer', 'inner'], 'the last decorator is outermost');
  readOnly = true; // applies without a rebuild
  const refused = (p: Promise<unknown>) => assert.rejects(p, (e) => isAppError(e) && e.code === 'read_only');
  await refused(d.write('b.txt', Readable.from([Buffer.from('x')]), { size: 1 }));
  await refused(d.mkdir('other'));
  await refused(d.delete('a.txt'));
  await refused(d.move!('a.txt', 'c.txt', { overwrite: false }));
  await refused(d.copy!('a.txt', 'c.txt', { overwrite: false }));
  await refused(d.multipart!.init('big.bin', { size: 10, partSize: 5 }));
  assert.equal((await d.stat('a.txt')).size, 5, 'reads pass');
  const names: string[] = [];
  for await (const e of d.list('')) names.push(e.name);
  assert.deepEqual(names.sort(), ['a.txt', 'dir']);
  let text = '';
  for await (const c of await d.read('a.txt')) text += c;
  assert.equal(text, 'hello');
  readOnly = false;
  await d.delete('a.txt');
  await d.close();
  tmp.cleanup();
});

test('a read stream held unconsumed while its signal aborts does not end the process; its consumer still sees the error', async () => {
  const { m, tmp } = manager();
  const d = await m.build({ uid: 'u2', driver: 'local', config: { root: `${tmp.dir}/files` } });
  await d.write('big.bin', Readable.from([randomBytes(1 << 20)]), { size: 1 << 20 });
  const ac = new AbortController();
  const body = await d.read('big.bin', undefined, ac.signal);
  // A copy still opening its target: nobody listens yet. Without the guard the 'error' below is uncaught.
  ac.abort();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(body.destroyed, true);
  await assert.rejects(pipeline(body, new Writable({ write: (_c, _e, cb) => cb() })), (e: unknown) => isAppError(e) && e.code === 'cancelled');
  await d.close();
  tmp.cleanup();
});
