/**
 * The updater end to end against a manifest and assets served by a loopback
 * HTTP server: real downloads, real `tar`, real launchers run as processes.
 * The bundles are small stand-ins (a `bin/service` script that prints its
 * version); `npm run dist:server` builds the real one.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { needTool, tempDir } from '../../test/helpers/tools';
import { isAppError } from '../errors';
import { createUpdater, selfUpdateCli, type UpdaterOptions, type UpdateEvents } from './index';
import { backupPath } from './bundle-port';

const skip = needTool('tar', 'tar') ?? undefined;
const OS = process.platform;
const ARCH = process.arch;

/** A stand-in bundle: `<dir>/bin/service version` prints `filedock <printed>` and exits `code`. */
function writeBundle(dir: string, printed: string, code = 0): void {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(join(dir, 'bin/service'), `#!/bin/sh\nif [ "$1" = version ]; then echo "filedock ${printed}"; exit ${code}; fi\nexit 64\n`);
  chmodSync(join(dir, 'bin/service'), 0o755);
}

/** A `.tar.gz` with one top folder, as dist:server lays it out. */
function packBundle(work: string, name: string, printed: string, code = 0): Buffer {
  const top = join(work, 'src', name);
  writeBundle(top, printed, code);
  const out = join(work, `${name}.tar.gz`);
  execFileSync('tar', ['-czf', out, '-C', dirname(top), name]);
  return readFileSync(out);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const versionOf = (root: string) => execFileSync(join(root, 'bin/service'), ['version'], { encoding: 'utf8' }).trim();

interface Feed {
  url: string;
  server: Server;
  /** Body served per path; a function may write a custom response. */
  routes: Map<string, Buffer | ((res: import('node:http').ServerResponse) => void)>;
  requests: Array<{ url: string; headers: IncomingHttpHeaders }>;
  connections: number;
}

async function startFeed(): Promise<Feed> {
  const feed = { routes: new Map(), requests: [], connections: 0 } as unknown as Feed;
  feed.server = createServer((req, res) => {
    feed.requests.push({ url: req.url ?? '', headers: req.headers });
    const route = feed.routes.get(req.url ?? '');
    if (!route) return void res.writeHead(404).end();
    if (typeof route === 'function') return route(res);
    res.writeHead(200, { 'content-length': route.length }).end(route);
  });
  feed.server.on('connection', () => feed.connections++);
  await new Promise<void>((r) => feed.server.listen(0, '127.0.0.1', r));
  const { port } = feed.server.address() as { port: number };
  feed.url = `http://127.0.0.1:${port}`;
  return feed;
}

const release = (version: string, body: Buffer | null, over: Record<string, unknown> = {}) => ({
  version,
  date: '2026-03-01',
  auto_ok: true,
  migrations: false,
  severity: 'normal',
  notes: `notes ${version}`,
  notes_url: '',
  image: `filedock:${version}`,
  assets: body ? [{ os: OS, arch: ARCH, url: `/assets/${version}.tar.gz`, sha256: sha(body) }] : [],
  ...over,
});

describe('updater against a loopback release feed', { skip }, () => {
  let feed: Feed;
  let tmp: { dir: string; cleanup: () => void };
  let good: Buffer;
  let n = 0;

  before(async () => {
    feed = await startFeed();
    tmp = tempDir('filedock-update-');
    good = packBundle(join(tmp.dir, 'pack-good'), 'filedock-server-0.2.1-x', '0.2.1');
  });
  after(async () => {
    await new Promise<void>((r) => feed.server.close(() => r()));
    tmp.cleanup();
  });

  /** A fresh install of 0.2.0 and a manifest path of its own; returns the updater and what it emitted. */
  function setup(releases: unknown[], over: Partial<UpdaterOptions> = {}) {
    const base = join(tmp.dir, `case-${++n}`);
    const root = join(base, 'opt', 'filedock-server');
    writeBundle(root, '0.2.0');
    const manifestPath = `/m${n}.json`;
    feed.routes.set(manifestPath, Buffer.from(JSON.stringify({ channel: 'stable', releases })));
    const events: Array<[keyof UpdateEvents, unknown]> = [];
    const snapshots: string[] = [];
    const updater = createUpdater({
      version: '0.2.0',
      dataDir: join(base, 'data'),
      check: true,
      channel: 'stable',
      manifestUrl: feed.url + manifestPath,
      intervalMs: 86_400_000,
      policy: 'manual',
      installMode: 'binary',
      installRoot: root,
      os: OS,
      arch: ARCH,
      snapshotDb: async (dest) => {
        snapshots.push(dest);
        writeFileSync(dest, 'snapshot');
      },
      emit: (e, p) => events.push([e, p]),
      log: { info: () => {}, warn: () => {} },
      ...over,
    });
    return { updater, root, base, events, snapshots };
  }

  const assertIntact = (root: string) => {
    assert.equal(versionOf(root), 'filedock 0.2.0', 'the old install still runs');
    assert.deepEqual(readdirSync(dirname(root)), ['filedock-server'], 'no staged, backup or journal left beside it');
  };

  const refusal = (reason: string) => (e: unknown) => isAppError(e) && e.code === 'update_refused' && e.params.reason === reason;

  test('a good update end to end: verified, unpacked, smoke-tested, snapshotted, swapped; the new build runs', async () => {
    feed.routes.set('/assets/0.2.1.tar.gz', good);
    const { updater, root, events, snapshots } = setup([release('0.2.0', null), release('0.2.1', good)]);
    const before = feed.requests.length;
    const status = await updater.check();
    assert.equal(status.latest?.version, '0.2.1');
    assert.equal(status.candidate, '0.2.1');
    const ua = feed.requests[before].headers;
    assert.equal(ua['user-agent'], 'Filedock/0.2.0');
    assert.equal(ua.cookie ?? ua.authorization, undefined);

    const r = await updater.apply();
    assert.deepEqual([r.from, r.to, r.restart_required], ['0.2.0', '0.2.1', true]);
    assert.equal(versionOf(root), 'filedock 0.2.1', 'the new build really runs');
    assert.equal(versionOf(backupPath(root, '0.2.0')), 'filedock 0.2.0', 'the old one is kept as .bak-<version>');
    assert.equal(snapshots.length, 1);
    assert.match(snapshots[0], /pre-update-0\.2\.0-to-0\.2\.1-/);
    assert.deepEqual(
      events.map((e) => e[0]),
      ['update_available', 'update_applied'],
    );
    assert.deepEqual(events[1][1], { from: '0.2.0', to: '0.2.1', restart_required: true });
    assert.equal(updater.status().last_applied?.to, '0.2.1');
    assert.equal(updater.status().last_error, null);
  });

  test('the supervisor restart hook runs after the swap', async () => {
    feed.routes.set('/assets/0.2.1.tar.gz', good);
    let restarts = 0;
    const { updater, root } = setup([release('0.2.1', good)], { restart: () => restarts++ });
    const r = await updater.apply('0.2.1');
    assert.equal(r.restart_required, false);
    assert.equal(restarts, 1);
    assert.equal(versionOf(root), 'filedock 0.2.1');
  });

  test('a corrupted asset (sha256 mismatch) aborts with the old install intact', async () => {
    const tampered = Buffer.from(good);
    tampered[tampered.length - 5] ^= 0xff;
    feed.routes.set('/assets/0.2.2.tar.gz', tampered);
    const { updater, root } = setup([release('0.2.2', good)]);
    await assert.rejects(updater.apply(), refusal('checksum_mismatch'));
    assertIntact(root);
    assert.equal(updater.status().last_error?.reason, 'checksum_mismatch');
    assert.equal(readdirSync(join(dirname(dirname(root)), 'data', 'updates')).length, 0, 'no partial download left');
  });

  test('a truncated download aborts with the old install intact', async () => {
    feed.routes.set('/assets/0.2.3.tar.gz', (res) => {
      res.writeHead(200, { 'content-length': good.length });
      res.write(good.subarray(0, 100));
      setTimeout(() => res.destroy(), 20);
    });
    const { updater, root } = setup([release('0.2.3', good)]);
    await assert.rejects(updater.apply(), refusal('download_failed'));
    assertIntact(root);
    assert.match(updater.status().last_error?.message ?? '', /broke off|100 of/);
  });

  test('an archive that cannot be unpacked (digest right, content broken) aborts cleanly', async () => {
    const broken = Buffer.concat([good.subarray(0, 40), Buffer.alloc(200, 7)]);
    feed.routes.set('/assets/0.2.4.tar.gz', broken);
    const { updater, root } = setup([release('0.2.4', broken)]);
    await assert.rejects(updater.apply(), refusal('unpack_failed'));
    assertIntact(root);
  });

  test('a failing smoke test (wrong version, then non-zero exit) aborts before any snapshot', async () => {
    const liar = packBundle(join(tmp.dir, 'pack-liar'), 'filedock-server-0.2.5-x', '9.9.9');
    const crasher = packBundle(join(tmp.dir, 'pack-crash'), 'filedock-server-0.2.6-x', '0.2.6', 3);
    feed.routes.set('/assets/0.2.5.tar.gz', liar);
    feed.routes.set('/assets/0.2.6.tar.gz', crasher);
    const { updater, root, snapshots } = setup([release('0.2.5', liar), release('0.2.6', crasher)]);
    await assert.rejects(updater.apply('0.2.5'), refusal('smoke_test_failed'));
    await assert.rejects(updater.apply('0.2.6'), refusal('smoke_test_failed'));
    assertIntact(root);
    assert.equal(snapshots.length, 0);
  });

  test('a failing pre-command aborts the upgrade; a passing one replaces the SQLite snapshot', async () => {
    feed.routes.set('/assets/0.2.1.tar.gz', good);
    const failing = setup([release('0.2.1', good)], { preCommand: 'exit 3' });
    await assert.rejects(failing.updater.apply(), refusal('snapshot_failed'));
    assertIntact(failing.root);
    assert.match(failing.updater.status().last_error?.message ?? '', /exited with 3/);

    const marker = join(tmp.dir, 'pre-ran');
    const passing = setup([release('0.2.1', good)], { preCommand: `echo "$FILEDOCK_UPDATE_FROM>$FILEDOCK_UPDATE_TO" > '${marker}'` });
    await passing.updater.apply();
    assert.equal(readFileSync(marker, 'utf8').trim(), '0.2.0>0.2.1');
    assert.equal(passing.snapshots.length, 0);
    assert.equal(versionOf(passing.root), 'filedock 0.2.1');
  });

  test('a failing database snapshot aborts too', async () => {
    feed.routes.set('/assets/0.2.1.tar.gz', good);
    const { updater, root } = setup([release('0.2.1', good)], {
      snapshotDb: async () => {
        throw new Error('disk full');
      },
    });
    await assert.rejects(updater.apply(), refusal('snapshot_failed'));
    assertIntact(root);
  });

  test('an asset only for another OS/CPU is refused', async () => {
    const { updater, root } = setup([release('0.2.1', good, { assets: [{ os: 'plan9', arch: 'mips', url: '/x', sha256: sha(good) }] })]);
    const s = await updater.check();
    assert.equal(s.latest?.version, '0.2.1');
    assert.equal(s.candidate, null);
    await assert.rejects(updater.apply(), refusal('no_asset'));
    await assert.rejects(updater.apply('0.2.1'), refusal('no_asset'));
    assertIntact(root);
  });

  test('a major is announced with instructions and never self-installed', async () => {
    const { updater, events } = setup([release('1.0.0', good, { notes_url: 'https://example.invalid/1.0' })]);
    const s = await updater.check();
    assert.equal(s.latest?.kind, 'major');
    assert.match(s.instructions ?? '', /major release.*example\.invalid\/1\.0/);
    await assert.rejects(updater.apply(), refusal('major_upgrade'));
    assert.deepEqual(events, [
      ['update_available', { version: '1.0.0', severity: 'info', kind: 'major', notes: 'notes 1.0.0', notes_url: 'https://example.invalid/1.0' }],
    ]);
  });

  test('update_available fires once per version; a security release is a warning', async () => {
    const { updater, events, base } = setup([release('0.2.1', good, { severity: 'security' })]);
    await updater.check();
    await updater.check();
    assert.equal(events.length, 1);
    assert.equal((events[0][1] as { severity: string }).severity, 'warning');
    // Also across a restart: the announced versions are persisted.
    feed.routes.set(`/m${n}.json`, Buffer.from(JSON.stringify({ channel: 'stable', releases: [release('0.2.1', good), release('0.2.7', good)] })));
    const again: unknown[] = [];
    const second = createUpdater({
      version: '0.2.0',
      dataDir: join(base, 'data'),
      check: true,
      channel: 'stable',
      manifestUrl: `${feed.url}/m${n}.json`,
      intervalMs: 0,
      policy: 'manual',
      installMode: 'binary',
      os: OS,
      arch: ARCH,
      snapshotDb: async () => {},
      emit: (e, p) => again.push([e, p]),
      log: { info() {}, warn() {} },
    });
    assert.equal(second.status().latest?.version, '0.2.1', 'status comes from the persisted cache');
    await second.check();
    assert.deepEqual(
      again.map((e) => (e as [string, { version: string }])[1].version),
      ['0.2.7'],
    );
  });

  test('a broken manifest is an error state, not a crash', async () => {
    const { updater } = setup([{ version: 'nope' }]);
    const s = await updater.check();
    assert.equal(s.last_error?.reason, 'manifest_invalid');
    assert.match(s.last_error?.message ?? '', /releases\.0/);
    feed.routes.set('/garbage.json', Buffer.from('{"channel": '));
    const g = setup([], { manifestUrl: `${feed.url}/garbage.json` });
    assert.equal((await g.updater.check()).last_error?.reason, 'manifest_invalid');
    const other = setup([], { channel: 'beta' });
    assert.match((await other.updater.check()).last_error?.message ?? '', /channel stable, not beta/);
    const missing = setup([], { manifestUrl: `${feed.url}/nothing-here.json` });
    assert.equal((await missing.updater.check()).last_error?.reason, 'network');
  });

  test('a container install refuses to self-upgrade and says how to upgrade', async () => {
    const { updater, root } = setup([release('0.2.1', good)], { installMode: 'docker' });
    const s = await updater.check();
    assert.equal(s.apply_refusal, 'container');
    assert.match(s.instructions ?? '', /filedock:0\.2\.1/);
    await assert.rejects(updater.apply(), refusal('container'));
    assertIntact(root);
  });

  test('SERVICE_UPDATE_CHECK=0: no connection ever reaches the feed', async () => {
    const before = feed.connections;
    const { updater } = setup([release('0.2.1', good)], { check: false, policy: 'patch' });
    updater.start();
    const s = await updater.check();
    await assert.rejects(updater.apply(), refusal('checks_disabled'));
    const lines: string[] = [];
    assert.equal(await selfUpdateCli(['--check'], { updater, out: (l) => lines.push(l) }), 0);
    updater.stop();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(s.check_enabled, false);
    assert.equal(s.checked_at, null);
    assert.match(lines.join('\n'), /no request was made/);
    assert.equal(feed.connections, before, 'no connection arrived');
  });

  test('a crash between the two moves is undone at the next start and recorded', async () => {
    const { root, base } = setup([]);
    // The state a crash leaves: old bundle moved aside, new one staged, journal written.
    const backup = backupPath(root, '0.2.0');
    const staged = `${root}.new-0.2.1`;
    writeBundle(staged, '0.2.1');
    renameSync(root, backup);
    writeFileSync(`${root}.swap.json`, JSON.stringify({ from: '0.2.0', to: '0.2.1', backup, staged, at: new Date().toISOString() }));
    const updater = createUpdater({
      version: '0.2.0',
      dataDir: join(base, 'data'),
      check: false,
      channel: 'stable',
      manifestUrl: '',
      intervalMs: 0,
      policy: 'manual',
      installMode: 'binary',
      installRoot: root,
      os: OS,
      arch: ARCH,
      snapshotDb: async () => {},
      emit: () => {},
      log: { info() {}, warn() {} },
    });
    assertIntact(root);
    assert.equal(updater.status().last_error?.reason, 'interrupted');
    assert.match(updater.status().last_error?.message ?? '', /0\.2\.0 was put back/);
  });

  test('service self-update: --check, --to and usage errors', async () => {
    feed.routes.set('/assets/0.2.1.tar.gz', good);
    const { updater, root } = setup([release('0.2.1', good), release('0.3.0', null)]);
    const lines: string[] = [];
    const out = (l: string) => lines.push(l);
    assert.equal(await selfUpdateCli(['--check'], { updater, out }), 0);
    assert.match(lines.join('\n'), /available: 0\.3\.0 \(minor/);
    assert.equal(await selfUpdateCli(['--bogus'], { updater, out }), 2);
    assert.equal(await selfUpdateCli(['--to', '0.3.0'], { updater, out }), 1);
    assert.match(lines.at(-1) ?? '', /not upgraded \(no_asset\)/);
    assert.equal(await selfUpdateCli(['--to', '0.2.1'], { updater, out }), 0);
    assert.match(lines.join('\n'), /upgraded 0\.2\.0 -> 0\.2\.1/);
    assert.equal(versionOf(root), 'filedock 0.2.1');
    assert.ok(existsSync(backupPath(root, '0.2.0')));
  });
});
