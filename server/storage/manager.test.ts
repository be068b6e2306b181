import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { isAppError, AppError } from '../errors';
import { tempDir } from '../../test/helpers/tools';
import { DriverManager } from './manager';
import { DriverRegistry } from './registry';
import { builtinDrivers } from './drivers';
import type { Entry, StorageDriver } from './types';

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
