// Builds what `npm start` and the desktop shell run:
//   dist/server/cli.js              the server + CLI bundle (node_modules stay external)
//   dist/server/workers/<name>.js   every server/**/*.worker.ts, for worker threads
//   dist/electron/{main,preload}.js the desktop shell (when electron/ has them)
//   dist/renderer/                  the web UI (Vite), precompressed (scripts/precompress.mjs)
// `--if-stale` skips the work when dist is newer than every source file.
import { build } from 'esbuild';
import { readdirSync, statSync, existsSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, basename } from 'node:path';
import { spawnSync } from 'node:child_process';
import { precompress } from './precompress.mjs';

const root = new URL('..', import.meta.url).pathname;
const files = (dir, re, out = []) => {
  if (!existsSync(dir)) return out;
  for (const n of readdirSync(dir)) {
    if (n === 'node_modules' || n === 'dist') continue;
    const p = join(dir, n);
    if (statSync(p).isDirectory()) files(p, re, out);
    else if (re.test(n)) out.push(p);
  }
  return out;
};
const newest = (list) => Math.max(0, ...list.map((f) => statSync(f).mtimeMs));

const stamp = join(root, 'dist/.build-stamp');
if (process.argv.includes('--if-stale') && existsSync(stamp)) {
  const src = newest([...files(join(root, 'server'), /\.tsx?$/), ...files(join(root, 'renderer'), /\.(tsx?|css|html)$/), join(root, 'package.json')]);
  if (statSync(stamp).mtimeMs >= src) process.exit(0);
}

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};

const workers = files(join(root, 'server'), /\.worker\.ts$/);
// Splitting keeps on-demand modules (remote drivers and their SDKs) out of the boot path; chunks sit
// beside cli.js so import.meta.url-relative lookups (workers, the UI folder) hold for every chunk.
await build({
  ...common,
  entryPoints: { cli: join(root, 'server/cli/main.ts') },
  outdir: join(root, 'dist/server'),
  splitting: true,
  chunkNames: 'chunk-[hash]',
});
if (workers.length)
  await build({ ...common, entryPoints: Object.fromEntries(workers.map((w) => [basename(w, '.ts'), w])), outdir: join(root, 'dist/server/workers') });

const electronEntries = ['main', 'preload'].map((n) => join(root, `electron/${n}.ts`)).filter(existsSync);
if (electronEntries.length) {
  await build({ ...common, format: 'cjs', banner: {}, external: ['electron'], entryPoints: electronEntries, outdir: join(root, 'dist/electron') });
  // The package is "type": "module"; the shell bundle is CommonJS.
  writeFileSync(join(root, 'dist/electron/package.json'), '{"type":"commonjs"}\n');
}

if (!process.argv.includes('--server-only') && existsSync(join(root, 'renderer/vite.config.ts'))) {
  const r = spawnSync(
    process.execPath,
    [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(root, 'renderer/vite.config.ts'), '--logLevel', 'warn'],
    { stdio: 'inherit', cwd: root },
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
  precompress(join(root, 'dist/renderer'));
}
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(stamp, new Date().toISOString());
