/** The worker-thread walk yields exactly the tree, skipping internal names and outside symlinks. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { STAGING_DIR, TEMP_PREFIX } from '../../../lib/paths';
import { tempDir } from '../../../../test/helpers/tools';
import { localDriver } from '.';
import type { StorageDriver, WalkEntry } from '../../types';

const FILES = 20_000;
const PER_DIR = 500;
let tmp: ReturnType<typeof tempDir>;
let d: StorageDriver;
const expected = new Set<string>();

before(async () => {
  tmp = tempDir('filedock-local-walk-');
  const root = `${tmp.dir}/root`;
  d = await localDriver.create({ path: root }, { stateDir: tmp.dir, uid: 'walk' });
  for (let i = 0; i < FILES; i++) {
    const dir = `d${Math.floor(i / PER_DIR)}/sub`;
    if (i % PER_DIR === 0) mkdirSync(`${root}/${dir}`, { recursive: true });
    writeFileSync(`${root}/${dir}/f${i}.txt`, String(i));
    expected.add(`${dir}/f${i}.txt`);
  }
  mkdirSync(`${root}/${STAGING_DIR}/x`, { recursive: true });
  writeFileSync(`${root}/d0/${TEMP_PREFIX}half`, 'x');
  mkdirSync(`${tmp.dir}/outside`);
  writeFileSync(`${tmp.dir}/outside/o.txt`, 'o');
  symlinkSync(`${tmp.dir}/outside`, `${root}/d0/escape`);
  symlinkSync(`${root}/d1`, `${root}/d0/loop`);
  symlinkSync(`${root}/d0`, `${root}/d1/back`);
});
after(async () => {
  await d.close();
  tmp.cleanup();
});

test('walk of 20,000 generated files yields exactly those files', async () => {
  const files = new Set<string>();
  const dirs: WalkEntry[] = [];
  const t0 = performance.now();
  for await (const e of d.walk!('')) {
    if (e.type === 'dir') dirs.push(e);
    else if (!e.path.includes('/loop/') && !e.path.includes('/back/')) files.add(e.path);
  }
  const ms = performance.now() - t0;
  assert.equal(files.size, FILES);
  assert.deepEqual(
    [...files].filter((p) => !expected.has(p)),
    [],
  );
  assert.ok(dirs.every((e) => e.name !== STAGING_DIR && !e.path.includes('escape')));
  console.log(`walked ${FILES} files in ${ms.toFixed(0)} ms`);
});

test('walk of a prefix gives paths relative to it; a missing prefix is not_found', async () => {
  const paths: string[] = [];
  for await (const e of d.walk!('d3')) paths.push(e.path);
  assert.deepEqual(paths.sort().slice(0, 2), ['sub', 'sub/f1500.txt']);
  assert.equal(paths.length, PER_DIR + 1);
  await assert.rejects(
    async () => {
      for await (const _ of d.walk!('nope')) void _;
    },
    (e: unknown) => (e as { code?: string }).code === 'not_found',
  );
});

test('stopping early terminates the worker', async () => {
  let n = 0;
  for await (const _ of d.walk!('')) if (++n === 1500) break;
  assert.equal(n, 1500);
});
