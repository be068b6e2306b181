/**
 * The sftp driver against a real OpenSSH server on loopback: the shared
 * conformance suite, then what is particular to SFTP (host-key policies,
 * credentials, outages and drops in the middle of a transfer).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { isAppError, type ErrorCode } from '../../server/errors';
import { randomBytes } from 'node:crypto';
import { DriverManager, DriverRegistry } from '../../server/storage';
import { createSftpDriver, sftpDriver } from '../../server/storage/drivers/sftp';
import { SftpSession } from '../../server/storage/drivers/sftp/client';
import type { StorageDriver } from '../../server/storage/types';
import { driverConformance } from './conformance';
import { startSshd, type SshdServer } from '../helpers/sshd';
import { freePort, needTool, tempDir } from '../helpers/tools';

const skip = needTool('sshd', 'openssh-server') ?? needTool('ssh-keygen', 'openssh-client') ?? false;
const MiB = 1024 * 1024;

/** A config for `server` with key login, rooted at a fresh sub-folder of its data dir. */
function configFor(server: SshdServer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const root = join(server.dataDir, `root-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(root);
  return { host: server.host, port: server.port, user: server.user, private_key: server.clientKey, root, timeout: 5, ...extra };
}

async function expectCode(p: Promise<unknown>, code: ErrorCode, reason?: RegExp): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(isAppError(e), `expected AppError ${code}, got ${String((e as Error)?.stack ?? e)}`);
    assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
    const got = String(e.params.reason ?? '');
    if (reason) assert.match(got, reason);
    return got;
  }
  return assert.fail(`expected AppError ${code}, but the call succeeded`);
}

const names = async (d: StorageDriver, dir: string): Promise<string[]> => {
  const out: string[] = [];
  for await (const e of d.list(dir)) out.push(e.name);
  return out.sort();
};

if (!skip) {
  let shared: SshdServer | undefined;
  driverConformance(
    'sftp',
    async () => {
      shared = await startSshd();
      const state = tempDir('filedock-sftp-state-');
      const driver = await createSftpDriver(configFor(shared), state.dir);
      return {
        driver,
        teardown: async () => {
          await driver.close();
          await shared?.dispose();
          state.cleanup();
        },
      };
    },
    { bigFileBytes: 64 * MiB, mtimePrecisionMs: 2000 },
  );
}

describe('sftp descriptor and config', () => {
  test('descriptor lists the spec keys with aliases, secrets and the root field', () => {
    const d = sftpDriver.descriptor;
    assert.equal(d.driver, 'sftp');
    const byKey = new Map(d.fields.map((f) => [f.key, f]));
    for (const k of ['host', 'port', 'user', 'password', 'private_key', 'key_path', 'root', 'known_hosts', 'host_key', 'insecure_skip_host_key'])
      assert.ok(byKey.has(k), `field ${k}`);
    assert.deepEqual(byKey.get('user')!.aliases, ['username']);
    assert.deepEqual(byKey.get('root')!.aliases, ['base_path', 'remote_path']);
    assert.deepEqual(
      d.fields.filter((f) => f.root).map((f) => f.key),
      ['root'],
    );
    assert.deepEqual(
      d.fields
        .filter((f) => f.secret)
        .map((f) => f.key)
        .sort(),
      ['password', 'private_key'],
    );
    assert.equal(byKey.get('port')!.default, 22);
    assert.equal(d.capabilities.ranges, true);
  });

  test('validate refuses the filesystem root, missing credentials and an unreadable pin', () => {
    const base = { host: 'h', user: 'u', password: 'p' };
    const fields = (c: Record<string, unknown>) => sftpDriver.validate!(c).map((p) => p.field);
    assert.deepEqual(fields({ ...base, root: '/srv/files' }), []);
    assert.deepEqual(fields({ ...base, remote_path: 'files' }), [], 'alias and relative sub-folder');
    assert.deepEqual(fields({ ...base, root: '/' }), ['root']);
    assert.deepEqual(fields({ ...base }), ['root']);
    assert.deepEqual(fields({ ...base, root: '/srv/../etc' }), ['root']);
    assert.deepEqual(fields({ host: 'h', username: 'u', root: '/x' }), ['password']);
    assert.deepEqual(fields({ ...base, root: '/x', host_key: 'not a key' }), ['host_key']);
    assert.deepEqual(fields({ ...base, root: '/x', port: 70000 }), ['port']);
  });
});

describe('sftp against OpenSSH', { skip }, () => {
  let server: SshdServer;
  const state = tempDir('filedock-sftp-state-');
  const drivers: StorageDriver[] = [];
  let made = 0;
  /** A driver with its own state dir unless one is given (the server's host key changes mid-suite). */
  const make = async (config: Record<string, unknown>, stateDir = join(state.dir, `d${made++}`), idleMs = 2000) => {
    const d = await createSftpDriver(config, stateDir, { idleMs });
    drivers.push(d);
    return d;
  };

  before(async () => {
    server = await startSshd({ password: true });
  });
  after(async () => {
    await Promise.all(drivers.map((d) => d.close()));
    await server?.dispose();
    state.cleanup();
  });

  test('sessions are reused, at most 4 are opened, and idle ones are closed', async () => {
    const config = configFor(server);
    writeFileSync(join(config.root as string, 'f.bin'), Buffer.alloc(4 * MiB, 3));
    const d = await make(config, undefined, 300);
    const before = server.connectionCount();
    for (let i = 0; i < 5; i++) await d.stat('f.bin');
    assert.equal(server.connectionCount() - before, 1, 'sequential calls share one session');
    // The peak is sampled while the load runs: on a loaded machine the first sessions can finish
    // and idle out (300 ms) before the last read ends, so a count taken afterwards says too little.
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, server.connectionCount() - before)), 10);
    const streams = await Promise.all(Array.from({ length: 6 }, () => d.read('f.bin')));
    await Promise.all([
      ...Array.from({ length: 20 }, () => d.stat('f.bin')),
      ...streams.map(async (st) => {
        for await (const _ of st) void _;
      }),
    ]);
    clearInterval(sampler);
    assert.ok(peak >= 2 && peak <= 4, `between 2 and 4 sessions under load, saw ${peak}`);
    for (let i = 0; i < 100 && server.connectionCount() > before; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(server.connectionCount(), before, 'idle sessions closed');
    assert.equal((await d.stat('f.bin')).size, 4 * MiB, 'and reopened on demand');
  });

  test('aliases and key_path are read at init', async () => {
    const { user, root, ...rest } = configFor(server);
    const d = await make({ ...rest, private_key: undefined, username: user, key_path: server.clientKeyPath, base_path: root });
    assert.equal((await d.stat('')).type, 'dir');
  });

  test('trust on first use records the key, then a swapped host key is refused', async () => {
    const stateDir = join(state.dir, 'tofu');
    const config = configFor(server);
    const d1 = await make(config, stateDir);
    await d1.stat('');
    const known = readFileSync(join(stateDir, 'known_hosts'), 'utf8');
    assert.equal(known, `[127.0.0.1]:${server.port} ${server.hostKeyLine()}\n`);

    await server.swapHostKey();
    const d2 = await make(config, stateDir);
    const reason = await expectCode(d2.stat(''), 'storage_unreachable', /mismatch/);
    assert.ok(reason.includes(server.hostFingerprint()), `reason names the new fingerprint: ${reason}`);
    // The driver made before the swap reconnects (its session died with the server) and is refused too.
    await expectCode(d1.stat(''), 'storage_unreachable', /mismatch/);
    assert.equal(readFileSync(join(stateDir, 'known_hosts'), 'utf8'), known, 'a changed key is never recorded');
  });

  test('a pinned host key is accepted as fingerprint or key line; another key is refused', async () => {
    await make(configFor(server, { host_key: server.hostFingerprint() })).then((d) => d.stat(''));
    await make(configFor(server, { host_key: `${server.hostKeyLine()} comment` })).then((d) => d.stat(''));
    const other = 'SHA256:' + 'A'.repeat(43);
    await expectCode(
      make(configFor(server, { host_key: other })).then((d) => d.stat('')),
      'storage_unreachable',
      /mismatch.*pinned/,
    );
  });

  test('strict known_hosts: a listed key passes, an unlisted host is refused', async () => {
    const file = join(state.dir, 'strict_known_hosts');
    writeFileSync(file, `# comment\nother.example ${server.hostKeyLine()}\n[127.0.0.1]:${server.port} ${server.hostKeyLine()}\n`);
    await make(configFor(server, { known_hosts: file })).then((d) => d.stat(''));
    writeFileSync(file, `other.example ${server.hostKeyLine()}\n`);
    await expectCode(
      make(configFor(server, { known_hosts: file })).then((d) => d.stat('')),
      'storage_unreachable',
      /not in known_hosts/,
    );
  });

  test('the known key type is negotiated when the server holds several', async () => {
    const multi = await startSshd({ hostKeyTypes: ['ed25519', 'ecdsa'] });
    try {
      const file = join(state.dir, 'ecdsa_known_hosts');
      writeFileSync(file, `[127.0.0.1]:${multi.port} ${multi.hostKeyLine('ecdsa')}\n`);
      await make(configFor(multi, { known_hosts: file })).then((d) => d.stat(''));
      await make(configFor(multi, { host_key: multi.hostKeyLine('ecdsa') })).then((d) => d.stat(''));
    } finally {
      await Promise.all(drivers.map((d) => d.close()));
      await multi.dispose();
    }
  });

  test('insecure_skip_host_key connects without recording anything', async () => {
    const stateDir = join(state.dir, 'insecure');
    await make(configFor(server, { insecure_skip_host_key: true }), stateDir).then((d) => d.stat(''));
    assert.equal(existsSync(join(stateDir, 'known_hosts')), false);
  });

  test('wrong credentials are a clear storage_unreachable', async () => {
    await expectCode(
      make({ ...configFor(server), private_key: undefined, password: 'definitely-wrong' }).then((d) => d.stat('')),
      'storage_unreachable',
      /authentication failed/,
    );
  });

  test('a closed port and a silent server fail fast with storage_unreachable', async () => {
    const port = await freePort();
    await expectCode(
      make(configFor(server, { port })).then((d) => d.stat('')),
      'storage_unreachable',
      /refused/,
    );
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const t0 = Date.now();
      await expectCode(
        make(configFor(server, { port: (silent.address() as { port: number }).port, timeout: 1 })).then((d) => d.stat('')),
        'storage_unreachable',
        /timed out/,
      );
      assert.ok(Date.now() - t0 < 4000, 'bounded by the timeout');
    } finally {
      silent.close();
    }
  });

  test('names the backend forbids are refused before anything is written', async () => {
    const d = await make(configFor(server));
    await expectCode(d.write(`${'x'.repeat(256)}.txt`, Readable.from([Buffer.from('x')]), { size: 1 }), 'name_too_long');
    await expectCode(d.mkdir('y'.repeat(300)), 'name_too_long');
    assert.deepEqual(await names(d, ''), []);
  });

  test('admin test through the manager: aliases resolved, root listed, an outage reported, then recovery', async () => {
    const registry = new DriverRegistry();
    registry.register(sftpDriver);
    const manager = new DriverManager(registry, { secretKey: randomBytes(32), stateDir: state.dir });
    const { user, root, ...rest } = configFor(server);
    writeFileSync(join(root as string, 'hello.txt'), 'hi');
    const driver = await manager.build({ uid: 'u-admin', driver: 'sftp', config: { ...rest, username: user, remote_path: root } });
    drivers.push(driver);
    assert.deepEqual(await manager.probe(driver), { sample_listing: ['hello.txt'], object_count: 1 });
    assert.ok(existsSync(join(state.dir, 'storage', 'u-admin', 'known_hosts')), 'first use recorded in the storage state dir');
    await server.stop();
    try {
      await expectCode(manager.probe(driver), 'storage_unreachable', /connection refused/);
    } finally {
      await server.start();
    }
    assert.equal((await manager.probe(driver)).object_count, 1);
    await expectCode(manager.build({ uid: 'u-bad', driver: 'sftp', config: { ...rest, user, root: '/' } }), 'validation_failed');
  });

  test('a killed server is storage_unreachable; the same driver recovers when it is back', async () => {
    const config = configFor(server);
    const d = await make(config);
    await d.write('a.txt', Readable.from([Buffer.from('before')]), { size: 6 });
    await server.stop();
    await expectCode(d.stat('a.txt'), 'storage_unreachable', /refused|lost/);
    await server.start();
    assert.equal((await d.stat('a.txt')).size, 6);
  });

  test('a connection dropped mid-download fails the stream; the next call reconnects', async () => {
    const config = configFor(server);
    writeFileSync(join(config.root as string, 'big.bin'), Buffer.alloc(32 * MiB, 7));
    const d = await make(config);
    const stream = await d.read('big.bin');
    let got = 0;
    const failure = await new Promise<unknown>((resolve) => {
      stream.on('data', (c: Buffer) => {
        if (got === 0) server.dropSessions();
        got += c.length;
      });
      stream.on('error', resolve);
      stream.on('end', () => resolve(null));
    });
    assert.ok(isAppError(failure) && failure.code === 'storage_unreachable', `stream failed with ${String(failure)}`);
    assert.ok(got < 32 * MiB, 'the stream did not pretend to finish');
    assert.equal((await d.stat('big.bin')).size, 32 * MiB);
  });

  test('a chunk larger than one request goes out as parallel requests, in order on disk', async () => {
    const config = configFor(server);
    const d = await make(config);
    // Counts the write requests outstanding at once on the real session (ssh2 alone would send a 2 MiB
    // chunk's pieces one round trip after another: two chunks in the window, two requests in flight).
    const call = SftpSession.prototype.call;
    let inflight = 0;
    let peak = 0;
    SftpSession.prototype.call = function <T>(
      this: SftpSession,
      what: string,
      start: (done: (err: Error | null | undefined, value?: T) => void) => void,
    ): Promise<T> {
      if (what !== 'write') return call.call(this, what, start) as Promise<T>;
      peak = Math.max(peak, ++inflight);
      return (call.call(this, what, start) as Promise<T>).finally(() => inflight--);
    };
    const chunks = Array.from({ length: 4 }, () => randomBytes(2 * MiB));
    try {
      await d.write('pieces.bin', Readable.from(chunks), { size: 8 * MiB });
    } finally {
      SftpSession.prototype.call = call;
    }
    assert.ok(peak >= 8, `at most ${peak} write requests were in flight`);
    assert.ok(readFileSync(join(config.root as string, 'pieces.bin')).equals(Buffer.concat(chunks)), 'the bytes landed in order');
  });

  test('an aborted upload is cancelled and leaves nothing behind', async () => {
    const config = configFor(server);
    const d = await make(config);
    const ac = new AbortController();
    let sent = 0;
    const body = new Readable({
      read() {
        if (sent++ === 3) ac.abort();
        setTimeout(() => this.push(Buffer.alloc(64 * 1024, 2)), 5);
      },
    });
    await expectCode(d.write('aborted.bin', body, { size: 10 * MiB, signal: ac.signal }), 'cancelled');
    assert.deepEqual(readdirSync(config.root as string), []);
  });

  test('a connection dropped mid-upload leaves neither the target nor a temp file', async () => {
    const config = configFor(server);
    const d = await make(config);
    let sent = 0;
    const body = new Readable({
      read() {
        if (sent === 4) server.dropSessions();
        // Keep feeding slowly after the drop so only the dead connection can end the upload.
        if (sent++ < 400) setTimeout(() => this.push(Buffer.alloc(256 * 1024, 1)), sent > 4 ? 10 : 0);
        else this.push(null);
      },
    });
    await expectCode(d.write('up.bin', body, { size: 100 * MiB }), 'storage_unreachable');
    const dir = config.root as string;
    for (let i = 0; i < 50 && readdirSync(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(readdirSync(dir), [], 'no target and no temp file left behind');
    assert.deepEqual(await names(d, ''), []);
  });
});
