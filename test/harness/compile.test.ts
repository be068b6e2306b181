/**
 * scripts/test-compile.mjs on a project of its own: two runs in one checkout take turns (a lock directory,
 * taken over when its owner is gone), and a changed file set rebuilds in place, so a run testing from the
 * tree meanwhile keeps finding its files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/tools';

const root = new URL('../..', import.meta.url).pathname;
const script = join(root, 'scripts/test-compile.mjs');

function project() {
  const t = tempDir('filedock-compile-');
  symlinkSync(join(root, 'node_modules'), join(t.dir, 'node_modules'));
  mkdirSync(join(t.dir, 'server'));
  writeFileSync(join(t.dir, 'server', 'a.ts'), 'export const a: number = 1;\n');
  writeFileSync(join(t.dir, 'server', 'b.ts'), "import { a } from './a';\nexport const b = a + 1;\n");
  return t;
}

const compile = (cwd: string) => spawnSync(process.execPath, [script], { cwd, encoding: 'utf8', timeout: 120_000 });

test('a file added rebuilds in place; a file removed takes only its output with it', () => {
  const t = project();
  try {
    assert.equal(compile(t.dir).status, 0);
    // Not any source's output: the old way (empty the tree, compile it again) would take it too.
    const sentinel = join(t.dir, '.test-build/server/sentinel.txt');
    writeFileSync(sentinel, 'kept');
    writeFileSync(join(t.dir, 'server', 'c.ts'), 'export const c = 3;\n');
    rmSync(join(t.dir, 'server', 'b.ts'));
    const r = compile(t.dir);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(existsSync(join(t.dir, '.test-build/server/c.js')), 'the new file compiled');
    assert.ok(!existsSync(join(t.dir, '.test-build/server/b.js')), "the removed source's output removed");
    assert.ok(existsSync(join(t.dir, '.test-build/server/a.js')));
    assert.ok(existsSync(sentinel), 'the tree was not emptied');
  } finally {
    t.cleanup();
  }
});

test('a run waits while another holds the lock, then compiles; a lock whose owner is gone is taken over', async () => {
  const t = project();
  try {
    const lock = join(t.dir, '.test-build.lock');
    const state = join(t.dir, '.test-build/.sources.json');
    // Held by a live process (this one).
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.pid));
    const child = spawn(process.execPath, [script], { cwd: t.dir, stdio: 'ignore' });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(child.exitCode, null, 'still waiting for the lock');
    assert.ok(!existsSync(state), 'nothing compiled while the lock is held');
    rmSync(lock, { recursive: true });
    assert.equal(await exited, 0);
    assert.ok(Object.keys(JSON.parse(readFileSync(state, 'utf8'))).includes('server/a.ts'));
    assert.ok(!existsSync(lock), 'the lock released');
    // Held by a process that is gone.
    writeFileSync(join(t.dir, 'server', 'a.ts'), 'export const a: number = 2;\n');
    mkdirSync(lock);
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    writeFileSync(join(lock, 'pid'), gone.stdout.trim());
    const r = compile(t.dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(readFileSync(join(t.dir, '.test-build/server/a.js'), 'utf8'), /a = 2/);
  } finally {
    t.cleanup();
  }
});
