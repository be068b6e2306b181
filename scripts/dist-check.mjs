// Packs the desktop app with electron-builder.yml the way `npm run dist` does, except
// for the Electron binary (no registry here ships it), and checks what went in:
//   node scripts/dist-check.mjs [--keep] [--json]
// electron-builder runs its Linux `dir` target with `electronDist` pointing at a
// stand-in (a placeholder `electron` executable and an empty `resources/`), so the
// file set, the asar archive, the unpacked native modules and app-update.yml are
// electron-builder's own. Native modules are not rebuilt for Electron's ABI here
// (`npmRebuild` off: that needs Electron's headers). Needs `npm run build` first.
// Exit 1 with the list of problems; `--json` prints the summary as JSON.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = new Set(process.argv.slice(2));
const problems = [];
const fail = (m) => problems.push(m);
const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));

const built = ['dist/electron/main.js', 'dist/electron/preload.js', 'dist/server/cli.js', 'dist/renderer/index.html'].filter((f) => !existsSync(join(root, f)));
if (built.length) {
  console.error(`dist-check: missing ${built.join(', ')}: run \`npm run build\` first`);
  process.exit(1);
}

// @electron/asar comes with electron-builder; resolve it from there.
const asar = createRequire(join(root, 'node_modules/app-builder-lib/package.json'))('@electron/asar');
const YAML = (await import('yaml')).default;

const work = mkdtempSync(join(tmpdir(), 'filedock-dist-check-'));
const standIn = join(work, 'electron-dist');
mkdirSync(join(standIn, 'resources'), { recursive: true });
writeFileSync(join(standIn, 'electron'), '#!/bin/sh\necho "stand-in for the Electron binary (scripts/dist-check.mjs)" >&2\nexit 1\n');
chmodSync(join(standIn, 'electron'), 0o755);

const started = Date.now();
const out = join(work, 'out');
const builder = spawnSync(
  process.execPath,
  [
    join(root, 'node_modules/electron-builder/cli.js'),
    '--config',
    'electron-builder.yml',
    '--linux',
    '--dir',
    '--publish',
    'never',
    `-c.electronDist=${standIn}`,
    '-c.npmRebuild=false',
    `-c.directories.output=${out}`,
  ],
  { cwd: root, encoding: 'utf8' },
);
const packSeconds = (Date.now() - started) / 1000;
if (builder.status !== 0) {
  console.error(builder.stdout, builder.stderr);
  if (!args.has('--keep')) rmSync(work, { recursive: true, force: true });
  console.error(`dist-check: electron-builder failed (exit ${builder.status})`);
  process.exit(1);
}

const resources = join(out, 'linux-unpacked/resources');
const archive = join(resources, 'app.asar');
const unpackedDir = `${archive}.unpacked`;
const walk = (dir, list = []) => {
  if (!existsSync(dir)) return list;
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) walk(p, list);
    else list.push(p);
  }
  return list;
};
// Every file of the app, as `/path` inside the archive; unpacked ones are on disk beside it.
const files = asar.listPackage(archive).filter((f) => !('files' in asar.statFile(archive, f.slice(1))));
const fileSet = new Set(files);
const unpacked = new Set(walk(unpackedDir).map((p) => `/${relative(unpackedDir, p)}`));

// The app's own files.
const pkg = JSON.parse(asar.extractFile(archive, 'package.json').toString());
if (pkg.main !== 'dist/electron/main.js') fail(`package.json main is ${pkg.main}, not dist/electron/main.js`);
for (const f of [
  '/dist/electron/main.js',
  '/dist/electron/preload.js',
  '/dist/server/cli.js',
  '/dist/renderer/index.html',
  '/resources/icon.png',
  '/resources/public-links.html',
])
  if (!fileSet.has(f)) fail(`missing ${f}`);
for (const icon of ['idle', 'running', 'busy', 'warn', 'error'])
  for (const f of [`/resources/tray-${icon}.png`, `/resources/tray-${icon}@2x.png`]) if (!fileSet.has(f)) fail(`missing ${f}`);
const index = asar.extractFile(archive, 'dist/renderer/index.html').toString();
const assets = [...index.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => `/dist/renderer/${m[1]}`);
if (!assets.length) fail('dist/renderer/index.html references no assets');
for (const a of assets) if (!fileSet.has(a)) fail(`index.html references ${a}, not packed`);
for (const w of readdirSync(join(root, 'dist/server/workers')).filter((n) => n.endsWith('.js')))
  if (!fileSet.has(`/dist/server/workers/${w}`)) fail(`missing worker /dist/server/workers/${w}`);

// Native addons must be real files outside the archive.
for (const f of ['/node_modules/better-sqlite3/build/Release/better_sqlite3.node']) if (!unpacked.has(f)) fail(`${f} is not unpacked from the archive`);
if (![...unpacked].some((f) => /^\/node_modules\/@img\/sharp-[^/]+\/lib\/sharp-[^/]+\.node$/.test(f))) fail("sharp's .node is not unpacked");
for (const f of files) if (f.endsWith('.node') && !unpacked.has(f)) fail(`${f} is a native addon inside the archive`);

// Nothing for development: maps, tests, docs, TypeScript, native sources.
const junk = files.filter(
  (f) =>
    /\.map$|\.test\.[cm]?[jt]sx?$|\/(test|tests|__tests__)\/|\.(md|markdown|c|cc|cpp|h)$|\.[cm]?ts$/i.test(f) ||
    /^\/(docs|test|server|electron|renderer|scripts|bench)\//.test(f),
);
if (junk.length) fail(`development files packed (${junk.length}): ${junk.slice(0, 10).join(', ')}${junk.length > 10 ? ' …' : ''}`);

// Packages: exactly the closure of package.json `dependencies` (resolved the way Node does), by
// name@version: electron-builder lays node_modules out anew, so paths differ from the disk's.
const resolvePkg = (name, fromDir) => {
  for (let d = fromDir; ; d = dirname(d)) {
    const c = join(d, 'node_modules', name);
    if (existsSync(join(c, 'package.json'))) return c;
    if (d === root || d === dirname(d)) return null;
  }
};
const project = readJson(join(root, 'package.json'));
const seen = new Set();
const expected = new Set();
const stack = Object.keys(project.dependencies).map((n) => [n, root]);
while (stack.length) {
  const [name, from] = stack.pop();
  const dir = resolvePkg(name, from);
  if (!dir || seen.has(dir)) continue;
  seen.add(dir);
  const p = readJson(join(dir, 'package.json'));
  expected.add(`${p.name}@${p.version}`);
  for (const dep of Object.keys({ ...p.dependencies, ...p.optionalDependencies })) stack.push([dep, dir]);
}
const packageRoot = /(?:^|\/)node_modules\/(?:@[^/]+\/)?[^/]+\/package\.json$/;
const manifest = (f) => JSON.parse(unpacked.has(f) ? readFileSync(join(unpackedDir, f)) : asar.extractFile(archive, f.slice(1)).toString());
const packed = new Set(
  files
    .filter((f) => packageRoot.test(f))
    .map(manifest)
    .map((p) => `${p.name}@${p.version}`),
);
const extra = [...packed].filter((p) => !expected.has(p)).sort();
const missing = [...expected].filter((p) => !packed.has(p)).sort();
if (extra.length) fail(`packages that are not production dependencies (${extra.length}): ${extra.join(', ')}`);
if (missing.length) fail(`production dependencies not packed (${missing.length}): ${missing.join(', ')}`);
const devOnly = Object.keys(project.devDependencies).filter(
  (n) => [...packed].some((p) => p.startsWith(`${n}@`)) && ![...expected].some((p) => p.startsWith(`${n}@`)),
);
if (devOnly.length) fail(`devDependencies packed: ${devOnly.join(', ')}`);

// The update feed electron-updater reads is the publish block, as written.
const feed = existsSync(join(resources, 'app-update.yml')) ? YAML.parse(readFileSync(join(resources, 'app-update.yml'), 'utf8')) : null;
const publish = YAML.parse(readFileSync(join(root, 'electron-builder.yml'), 'utf8')).publish;
if (!feed) fail('resources/app-update.yml missing');
else
  for (const k of ['provider', 'url', 'channel'])
    if (feed[k] !== publish[k]) fail(`app-update.yml ${k} is ${feed[k]}, electron-builder.yml says ${publish[k]}`);

const size = (list, base) => list.reduce((n, f) => n + statSync(join(base, f)).size, 0);
const summary = {
  ok: problems.length === 0,
  problems,
  pack_seconds: packSeconds,
  files: files.length,
  unpacked_files: unpacked.size,
  packages: packed.size,
  asar_bytes: statSync(archive).size,
  unpacked_bytes: size([...unpacked], unpackedDir),
  feed,
  work: args.has('--keep') ? work : undefined,
};
if (!args.has('--keep')) rmSync(work, { recursive: true, force: true });
if (args.has('--json')) console.log(JSON.stringify(summary, null, 2));
else {
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  console.log(
    `dist-check: ${summary.files} files, ${summary.packages} packages; app.asar ${mb(summary.asar_bytes)} + unpacked ${mb(summary.unpacked_bytes)} (${summary.unpacked_files} files); packed in ${packSeconds.toFixed(0)} s`,
  );
  for (const p of problems) console.log(`  ✖ ${p}`);
  if (summary.work) console.log(`  kept: ${summary.work}`);
}
process.exit(problems.length ? 1 : 0);
