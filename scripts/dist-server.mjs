// Builds the headless release bundle ("the binary" of a headless install,
// docs/updates.md):
//   release/filedock-server-<version>-<os>-<arch>.tar.gz   one top folder holding
//     bin/service (bin/service.cmd)  launcher: runs the bundled Node on dist/server/cli.js
//     node/bin/node (node/node.exe)  the Node runtime, copied from the one running this script
//     dist/server, dist/renderer     the built server and web UI (scripts/build.mjs runs first)
//     node_modules/                  production dependencies only, copied from this checkout (no addon sources)
//     package.json                   name, version, "type": "module"
//   release/<same>.tar.gz.sha256, release/<same>.asset.json  digest and the manifest's asset entry
// The bundle is smoke-tested (`bin/service version`) before it is packed.
import { spawnSync, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync, createReadStream } from 'node:fs';
import { join, relative, sep } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const win = process.platform === 'win32';
const fail = (msg) => {
  console.error(`dist:server: ${msg}`);
  process.exit(1);
};

const built = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { stdio: 'inherit', cwd: root });
if (built.status !== 0) fail('the build failed');

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const layout = JSON.parse(readFileSync(join(root, 'scripts/bundle-layout.json'), 'utf8'));
const name = layout.name.replace('{version}', pkg.version).replace('{os}', process.platform).replace('{arch}', process.arch);
const releaseDir = join(root, 'release');
const stage = join(releaseDir, name);
rmSync(stage, { recursive: true, force: true });
mkdirSync(join(stage, 'bin'), { recursive: true });

// The runtime: the Node binary running this script, so the bundle runs what was tested here.
const nodeDest = win ? join(stage, 'node', 'node.exe') : join(stage, 'node', 'bin', 'node');
mkdirSync(join(nodeDest, '..'), { recursive: true });
cpSync(process.execPath, nodeDest);
chmodSync(nodeDest, 0o755);

for (const part of ['server', 'renderer'])
  if (existsSync(join(root, 'dist', part))) cpSync(join(root, 'dist', part), join(stage, 'dist', part), { recursive: true });
if (!existsSync(join(stage, 'dist/server/cli.js'))) fail('dist/server/cli.js is missing after the build');

// Production dependencies: every package `npm ls --omit=dev` reports (extraneous ones left out),
// copied whole from the top-level folder that holds it (nested node_modules of a production
// package are production too).
const ls = spawnSync(win ? 'npm.cmd' : 'npm', ['ls', '--omit=dev', '--all', '--json', '--long'], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 256 << 20,
  shell: win,
});
const modulesDir = realpathSync(join(root, 'node_modules'));
const tops = new Set();
const visit = (deps = {}) => {
  for (const d of Object.values(deps)) {
    if (d.extraneous || d.missing || !d.path || !existsSync(d.path)) continue;
    const rel = relative(modulesDir, realpathSync(d.path));
    if (rel.startsWith('..') || rel === '') continue;
    const segs = rel.split(sep);
    tops.add(segs[0].startsWith('@') ? join(segs[0], segs[1]) : segs[0]);
    visit(d.dependencies);
  }
};
const listed = JSON.parse(ls.stdout || '{}').dependencies ?? {};
// Electron is an optional dependency for the desktop shell only; the headless bundle never runs it.
delete listed.electron;
visit(listed);
if (tops.size === 0) fail(`npm ls listed no production packages: ${ls.stderr}`);
for (const t of tops) cpSync(join(root, 'node_modules', t), join(stage, 'node_modules', t), { recursive: true, dereference: true });
// Addons compiled here (binding.gyp + build/Release/*.node) need only the .node file at run time:
// their C/C++ sources and object files are about a third of node_modules.
for (const t of tops) {
  const pkgDir = join(stage, 'node_modules', t);
  if (!existsSync(join(pkgDir, 'binding.gyp')) || !existsSync(join(pkgDir, 'build', 'Release'))) continue;
  for (const junk of ['deps', 'src', 'build/deps', 'build/Release/obj', 'build/Release/obj.target', 'build/Release/.deps'])
    rmSync(join(pkgDir, junk), { recursive: true, force: true });
}

writeFileSync(join(stage, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'module' }, null, 2) + '\n');
writeFileSync(
  join(stage, 'bin', 'service'),
  `#!/bin/sh
# Filedock headless launcher: the bundled Node runs the bundled server.
# SERVICE_INSTALL_MODE defaults to "binary": this bundle can replace itself.
here=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd -P)
SERVICE_INSTALL_MODE="\${SERVICE_INSTALL_MODE:-binary}"
export SERVICE_INSTALL_MODE
exec "$here/node/bin/node" "$here/dist/server/cli.js" "$@"
`,
);
chmodSync(join(stage, 'bin', 'service'), 0o755);
writeFileSync(
  join(stage, 'bin', 'service.cmd'),
  `@echo off\r\nif "%SERVICE_INSTALL_MODE%"=="" set SERVICE_INSTALL_MODE=binary\r\n"%~dp0..\\node\\node.exe" "%~dp0..\\dist\\server\\cli.js" %*\r\n`,
);

// The Dockerfile (and its check) rely on this layout.
for (const p of win ? [] : layout.paths) if (!existsSync(join(stage, p))) fail(`${p} is missing from the bundle (scripts/bundle-layout.json)`);
const launcher = join(stage, 'bin', win ? 'service.cmd' : 'service');
const printed = execFileSync(launcher, ['version'], { encoding: 'utf8', shell: win }).trim();
if (printed !== pkg.version) fail(`smoke test: bin/service version printed ${JSON.stringify(printed)}, expected ${pkg.version}`);

const archive = join(releaseDir, `${name}.tar.gz`);
rmSync(archive, { force: true });
execFileSync('tar', ['-czf', archive, '-C', releaseDir, name], { stdio: 'inherit' });
rmSync(stage, { recursive: true, force: true });

const hash = createHash('sha256');
for await (const chunk of createReadStream(archive)) hash.update(chunk);
const sha256 = hash.digest('hex');
writeFileSync(`${archive}.sha256`, `${sha256}  ${name}.tar.gz\n`);
const asset = { os: process.platform, arch: process.arch, url: `${name}.tar.gz`, sha256 };
writeFileSync(join(releaseDir, `${name}.asset.json`), JSON.stringify(asset, null, 2) + '\n');
console.log(`${relative(root, archive)}  ${(statSync(archive).size / 1e6).toFixed(1)} MB  sha256 ${sha256}  (${tops.size} production packages)`);
