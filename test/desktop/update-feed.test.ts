/**
 * The update feed, both ends real: electron-builder's own writer makes the
 * `latest*.yml` files for every target in electron-builder.yml, a loopback
 * server serves them, and electron-updater's generic provider, configured from
 * the same `publish` block (what app-update.yml carries), finds the new version
 * and the installer it would download on each platform.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { once } from 'node:events';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { tempDir } from '../helpers/tools';

const root = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);
const { Arch, Platform } = require('app-builder-lib');
const { createUpdateInfoTasks, writeUpdateInfoFiles } = require('app-builder-lib/out/publish/updateInfoBuilder.js');
const { GenericProvider } = require('electron-updater/out/providers/GenericProvider');
const { HttpExecutor } = require('builder-util-runtime');

type Target = string | { target: string; arch?: string[] };
const config = YAML.parse(readFileSync(join(root, 'electron-builder.yml'), 'utf8'));
const publish = config.publish as { provider: string; url: string; channel: string };
const VERSION = '9.9.9';
const tmp = tempDir('filedock-feed-');
after(() => tmp.cleanup());

/** Node's http under electron-updater's executor (the app uses Electron's net module; the feed protocol is the same). */
class NodeExecutor extends HttpExecutor<ClientRequest> {
  createRequest(options: RequestOptions, callback: (res: IncomingMessage) => void): ClientRequest {
    const r = request(options);
    r.on('response', callback);
    return r;
  }
}

const OS = {
  linux: { platform: Platform.LINUX, node: 'linux' },
  mac: { platform: Platform.MAC, node: 'darwin' },
  win: { platform: Platform.WINDOWS, node: 'win32' },
} as const;

/** Builds an artifact's file name from the yml's `artifactName` (the target's, else the platform's, else the default shape). */
function artifactName(os: keyof typeof OS, target: string, arch: string): string {
  const ext = { AppImage: 'AppImage', deb: 'deb', nsis: 'exe', dmg: 'dmg', zip: 'zip' }[target]!;
  const pattern: string =
    config[target === 'AppImage' ? 'appImage' : target]?.artifactName ?? config[os]?.artifactName ?? '${productName}-${version}-${arch}.${ext}';
  return pattern.replace('${productName}', config.productName).replace('${version}', VERSION).replace('${arch}', arch).replace('${ext}', ext);
}

/** Writes a stand-in installer per target and arch, then the feed files exactly as electron-builder does after packing. */
async function writeFeed(dir: string): Promise<string[]> {
  const written: string[] = [];
  for (const os of Object.keys(OS) as Array<keyof typeof OS>) {
    const packager = {
      platform: OS[os].platform,
      platformSpecificBuildOptions: config[os] ?? {},
      config,
      appInfo: { version: VERSION },
      info: {},
      getResource: async () => null,
      emitArtifactCreated: async (e: { file: string }) => void written.push(e.file),
    };
    const tasks = [];
    for (const t of config[os].target as Target[]) {
      const { target, arch = ['x64'] } = typeof t === 'string' ? { target: t } : t;
      for (const a of arch) {
        const file = join(dir, artifactName(os, target, a));
        writeFileSync(file, `${target} ${a} installer`);
        tasks.push(...(await createUpdateInfoTasks({ packager, target: { outDir: dir }, file, arch: Arch[a as 'x64'], safeArtifactName: null }, [publish])));
      }
    }
    await writeUpdateInfoFiles(tasks, packager);
  }
  return written.map((f) => f.slice(dir.length + 1)).sort();
}

test('electron-updater on each platform finds the feed file electron-builder writes, and its installer, from the one publish block', async () => {
  assert.equal(publish.provider, 'generic');
  const dir = tmp.dir;
  const feedFiles = await writeFeed(dir);
  assert.deepEqual(feedFiles, [`${publish.channel}-linux.yml`, `${publish.channel}-mac.yml`, `${publish.channel}.yml`]);

  const path = new URL(publish.url).pathname.replace(/\/$/, '');
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    asked.push(url.pathname);
    const file = join(dir, decodeURIComponent(url.pathname.slice(path.length + 1)));
    if (!url.pathname.startsWith(`${path}/`) || !existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200).end(readFileSync(file));
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  after(() => server.close());
  const feedUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}${path}`;

  const latest = async (platform: string) => {
    // What app-update.yml holds is the publish block; only the host is the test's.
    const provider = new GenericProvider(
      { ...publish, url: feedUrl },
      { channel: null, isAddNoCacheQuery: false },
      { platform, executor: new NodeExecutor(), isUseMultipleRangeRequest: false },
    );
    provider.setRequestHeaders(null);
    const info = await provider.getLatestVersion();
    return { info, files: provider.resolveFiles(info).map((f: { url: URL }) => f.url.pathname.split('/').pop()) as string[] };
  };

  const linux = await latest('linux');
  assert.equal(linux.info.version, VERSION);
  assert.deepEqual(linux.files.sort(), [artifactName('linux', 'AppImage', 'x64'), artifactName('linux', 'deb', 'x64')].sort());

  const win = await latest('win32');
  assert.equal(win.info.version, VERSION);
  assert.deepEqual(win.files, [artifactName('win', 'nsis', 'x64')]);

  // A Mac updates from a zip (Squirrel.Mac takes nothing else): one per CPU, beside the dmgs.
  const mac = await latest('darwin');
  assert.equal(mac.info.version, VERSION);
  for (const arch of ['x64', 'arm64']) assert.ok(mac.files.includes(artifactName('mac', 'zip', arch)), `latest-mac.yml lists the ${arch} zip: ${mac.files}`);

  assert.deepEqual(asked, [`${path}/${publish.channel}-linux.yml`, `${path}/${publish.channel}.yml`, `${path}/${publish.channel}-mac.yml`]);
});
