import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dir = fileURLToPath(new URL('.', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };

/** Bundles like scripts/build.mjs does for the shell and returns the modules left to require at runtime. */
async function runtimeRequires(entry: string): Promise<string[]> {
  const out = await build({
    entryPoints: [dir + entry],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    packages: 'external',
    external: ['electron'],
    logLevel: 'silent',
  });
  const code = out.outputFiles[0].text;
  return [...new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]))].sort();
}
const bare = (mods: string[]) =>
  mods.filter((m) => !m.startsWith('node:')).map((m) => (m.startsWith('@') ? m.split('/').slice(0, 2).join('/') : m.split('/')[0]));

test('the pure modules never load electron at runtime', async () => {
  for (const m of [
    'server-host.ts',
    'tray-menu.ts',
    'windows.ts',
    'desktop-settings.ts',
    'pairing.ts',
    'lan.ts',
    'public-selftest.ts',
    'power.ts',
    'log-file.ts',
    'server-env.ts',
    'fork.ts',
    'shell.ts',
  ])
    assert.ok(!(await runtimeRequires(m)).includes('electron'), m);
});

test('the preload needs nothing but electron (sandboxed preloads cannot require packages)', async () => {
  assert.deepEqual(bare(await runtimeRequires('preload.ts')), ['electron']);
});

test('every package the main bundle requires ships with the app (dependencies, or electron itself)', async () => {
  const missing = bare(await runtimeRequires('main.ts')).filter((m) => m !== 'electron' && !(m in pkg.dependencies));
  assert.deepEqual(missing, []);
});
