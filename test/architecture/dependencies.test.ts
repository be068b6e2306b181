/**
 * package.json's `dependencies` are what the shipped service and app load:
 * each is imported by some non-test source under server/, electron/ or
 * renderer/src, and none is a type package (those are devDependencies).
 * Packages only the tests, benches or build scripts use (pdf-lib builds the
 * example apps) are devDependencies; packages nothing imports are gone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' ? [] : sources(p);
    return /\.(ts|tsx|mjs|js)$/.test(d.name) && !/\.test\.tsx?$/.test(d.name) ? [p] : [];
  });
}

test('every production dependency is imported by the shipped code, and none is a type package', () => {
  const files = ['server', 'electron', 'renderer/src'].flatMap((d) => sources(join(root, d)));
  assert.ok(files.length > 300, 'the scan found the sources');
  const imported = new Set<string>();
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(
      /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]((?:@[\w.-]+\/)?[\w.-]+)(?:\/[^'"]*)?['"]/g,
    ))
      imported.add(m[1]);
  }
  const deps = Object.keys(pkg.dependencies);
  assert.deepEqual(
    deps.filter((d) => d.startsWith('@types/')),
    [],
    'type packages belong in devDependencies',
  );
  assert.deepEqual(
    deps.filter((d) => !d.startsWith('@types/') && !imported.has(d)),
    [],
    'not imported by server/, electron/ or renderer/src',
  );
});
