/**
 * The desktop updater under plain Node: a fake of electron-updater's small
 * surface that does what its generic provider does (fetch `<channel>-linux.yml`
 * from the feed, download the file, check its sha512) against a feed served on
 * loopback. The Electron binary is not needed.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AppUpdater } from 'electron-updater';
import YAML from 'yaml';
import type { UpdaterPort } from '../../server/update';
import type { UpdateState } from '../types';
import { createDesktopUpdater, type AutoUpdaterSurface, type DesktopUpdaterHandle } from './desktop-updater';
import { SleepInhibitor } from '../sleep-inhibitor';

// Compile-time checks: the real autoUpdater fits our surface, and our port fits the server's.
export const realFits = (u: AppUpdater): AutoUpdaterSurface => u;
export const portFits = (h: DesktopUpdaterHandle): UpdaterPort => h.port;

const newer = (a: string, b: string) => a.localeCompare(b, undefined, { numeric: true }) > 0;

class FakeAutoUpdater extends EventEmitter implements AutoUpdaterSurface {
  autoDownload = true;
  autoInstallOnAppQuit = true;
  feed: { url: string; channel?: string | null } | null = null;
  installs: Array<[boolean | undefined, boolean | undefined]> = [];
  private offer: { version: string; path: string; sha512: string } | null = null;
  constructor(private readonly current: string) {
    super();
  }
  setFeedURL(o: { provider: 'generic'; url: string; channel?: string | null }) {
    this.feed = o;
  }
  async checkForUpdates() {
    this.emit('checking-for-update');
    try {
      const res = await fetch(`${this.feed!.url}/${this.feed!.channel ?? 'latest'}-linux.yml`);
      if (!res.ok) throw new Error(`feed answered HTTP ${res.status}`);
      const info = YAML.parse(await res.text()) as { version: string; path: string; sha512: string };
      this.offer = info;
      this.emit(newer(info.version, this.current) ? 'update-available' : 'update-not-available', { version: info.version });
    } catch (e) {
      this.emit('error', e);
      throw e;
    }
  }
  async downloadUpdate() {
    const o = this.offer!;
    const body = Buffer.from(await (await fetch(`${this.feed!.url}/${o.path}`)).arrayBuffer());
    this.emit('download-progress', { percent: 100 });
    if (createHash('sha512').update(body).digest('base64') !== o.sha512) {
      const e = new Error('sha512 checksum mismatch');
      this.emit('error', e);
      throw e;
    }
    this.emit('update-downloaded', { version: o.version });
    return [o.path];
  }
  quitAndInstall(isSilent?: boolean, isForceRunAfter?: boolean) {
    this.installs.push([isSilent, isForceRunAfter]);
  }
}

describe('desktop updater on a loopback generic feed', () => {
  let server: Server;
  let url: string;
  const files = new Map<string, Buffer>();
  const installer = Buffer.from('pretend AppImage 1.3.0');
  const sha512 = (b: Buffer) => createHash('sha512').update(b).digest('base64');

  before(async () => {
    server = createServer((req, res) => {
      const body = files.get(req.url ?? '');
      if (!body) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    files.set('/stable/Filedock-1.3.0.AppImage', installer);
    files.set('/stable/latest-linux.yml', Buffer.from(YAML.stringify({ version: '1.3.0', path: 'Filedock-1.3.0.AppImage', sha512: sha512(installer) })));
    files.set(
      '/beta/beta-linux.yml',
      Buffer.from(YAML.stringify({ version: '1.3.0', path: 'Filedock-1.3.0.AppImage', sha512: sha512(Buffer.from('tampered')) })),
    );
    files.set('/beta/Filedock-1.3.0.AppImage', installer);
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  function make(current: string, feed: string, channel?: string, beforeInstall = async () => {}, whenIdle?: () => Promise<void>) {
    const au = new FakeAutoUpdater(current);
    const logs: string[] = [];
    const up = createDesktopUpdater({ autoUpdater: au, feedUrl: `${url}${feed}`, channel, beforeInstall, whenIdle, log: (m) => logs.push(m) });
    const seen: UpdateState[] = [];
    up.on('change', () => seen.push(up.state));
    return { au, up, seen };
  }
  const waitFor = (up: DesktopUpdaterHandle, s: UpdateState) =>
    new Promise<void>((resolve) => {
      if (up.state === s) return resolve();
      up.on('change', () => up.state === s && resolve());
    });

  test('check -> available -> downloading -> downloaded, then the tray install quits and installs', async () => {
    let snapshots = 0;
    const { au, up, seen } = make('1.2.0', '/stable', undefined, async () => void snapshots++);
    assert.deepEqual(au.feed, { provider: 'generic', url: `${url}/stable`, channel: null });
    assert.equal(au.autoDownload, false);
    assert.equal(au.autoInstallOnAppQuit, false);
    await up.check();
    await waitFor(up, 'downloaded');
    assert.deepEqual(seen, ['checking', 'available', 'downloading', 'downloaded']);
    assert.equal(up.version, '1.3.0');
    up.install();
    assert.equal(up.state, 'installing');
    await new Promise((r) => setImmediate(r));
    assert.equal(snapshots, 1);
    assert.deepEqual(au.installs, [[false, true]]);
  });

  test('an install waits while the server keeps the computer awake (a copy runs), then goes ahead when it ends', async () => {
    let next = 1;
    const held = new Set<number>();
    const inhibitor = new SleepInhibitor({ start: () => (held.add(next), next++), stop: (id) => held.delete(id) });
    let snapshots = 0;
    const { au, up } = make(
      '1.2.0',
      '/stable',
      undefined,
      async () => void snapshots++,
      () => inhibitor.whenIdle(),
    );
    await up.check();
    await waitFor(up, 'downloaded');
    inhibitor.update({ active: true, reasons: [{ kind: 'files.transfer', count: 1 }] });
    up.install();
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(up.state, 'waiting');
    up.install();
    await up.check();
    assert.equal(up.state, 'waiting', 'neither a second click nor a check disturbs the wait');
    assert.equal(snapshots, 0);
    assert.deepEqual(au.installs, []);
    inhibitor.update({ active: true, reasons: [{ kind: 'transfers', count: 2 }] });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(au.installs, [], 'still busy with something else');
    inhibitor.update({ active: false, reasons: [] });
    await waitFor(up, 'installing');
    await new Promise((r) => setImmediate(r));
    assert.equal(snapshots, 1);
    assert.deepEqual(au.installs, [[false, true]], 'installed once');
    assert.equal(held.size, 0);
  });

  test('nothing newer: not-available; install is a no-op', async () => {
    const { au, up } = make('1.3.0', '/stable');
    await up.check();
    assert.equal(up.state, 'not-available');
    up.install();
    assert.deepEqual(au.installs, []);
  });

  test('a tampered download and an unreachable feed end in the error state with the reason', async () => {
    const tampered = make('1.2.0', '/beta', 'beta');
    await tampered.up.check();
    await waitFor(tampered.up, 'error');
    assert.match(tampered.up.error ?? '', /sha512/);
    tampered.up.install();
    assert.deepEqual(tampered.au.installs, []);
    const gone = make('1.2.0', '/nowhere');
    await gone.up.check();
    assert.equal(gone.up.state, 'error');
    assert.match(gone.up.error ?? '', /HTTP 404/);
  });

  test('a failing pre-install snapshot cancels the install and keeps the download', async () => {
    const { au, up } = make('1.2.0', '/stable', undefined, async () => {
      throw new Error('snapshot failed');
    });
    await up.check();
    await waitFor(up, 'downloaded');
    up.install();
    await waitFor(up, 'error');
    assert.equal(up.error, 'snapshot failed');
    assert.deepEqual(au.installs, []);
  });

  test('the install port (admin apply path): download, snapshot, then quit and install', async () => {
    const { au, up } = make('1.2.0', '/stable');
    const phases: string[] = [];
    let snapshotAt = -1;
    const out = await up.port.install(
      { from: '1.2.0', version: '1.3.0' },
      {
        beforeSwap: async () => void (snapshotAt = au.installs.length),
        onPhase: (p) => phases.push(p),
      },
    );
    assert.deepEqual(out, { restartRequired: false });
    assert.deepEqual(phases, ['downloading', 'snapshot', 'restarting']);
    assert.equal(snapshotAt, 0, 'the snapshot ran before quit-and-install');
    assert.deepEqual(au.installs, [[false, true]]);
    const other = make('1.2.0', '/stable');
    await assert.rejects(
      other.up.port.install({ from: '1.2.0', version: '1.4.0' }, { beforeSwap: async () => {}, onPhase: () => {} }),
      /offers 1\.3\.0, not 1\.4\.0/,
    );
    assert.deepEqual(other.au.installs, []);
  });
});
