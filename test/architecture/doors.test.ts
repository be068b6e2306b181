/**
 * Doors reach files through `forActor` only: the file service's storage
 * operations and protection ports (`FileService.ops`, `.ports`) are its own
 * plumbing. The dependency check sees imports, not field reads, so this test
 * looks for the reads: outside server/files/ and the composition root, no
 * source names `files.ops` or `files.ports`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('../../server', import.meta.url).pathname;
const READ = /\bfiles\??\.(ops|ports)\b/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'files' && dir === root ? [] : sources(p);
    return /\.ts$/.test(d.name) && !/\.test\.ts$/.test(d.name) && p !== join(root, 'compose.ts') ? [p] : [];
  });
}

test('no door reads the file service’s storage operations or ports (it goes through forActor)', () => {
  const found = sources(root).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(READ)].map((m) => `${relative(root, file)}: files.${m[1]}`));
  assert.ok(sources(root).length > 100, 'the scan found the server sources');
  assert.deepEqual(found, []);
});
