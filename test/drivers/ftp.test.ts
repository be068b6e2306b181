/**
 * The ftp driver against a real vsftpd on loopback: the shared conformance
 * suite over explicit FTPS with a pinned self-signed certificate, then what
 * only a network driver has to get right (credentials, outages and recovery,
 * implicit TLS, certificate trust, a server dying mid-transfer, names the
 * server forbids, a 1 GiB upload in flat memory, the session pool).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { isAppError, type ErrorCode } from '../../server/errors';
import type { StorageDriver } from '../../server/storage/types';
import { ftpDriver } from '../../server/storage/drivers/ftp';
import { parseListTime } from '../../server/storage/drivers/ftp/list-time';
import { needTool } from '../helpers/tools';
import { startVsftpd, type Vsftpd } from '../helpers/vsftpd';
import { flatMemoryUpload, slowBody } from '../helpers/rclone-webdav';
import { driverConformance } from './conformance';

const skip = (needTool('vsftpd', 'vsftpd') ?? needTool('openssl', 'openssl')) ?? undefined;
const MiB = 1024 * 1024;

const driverFor = (s: Vsftpd, extra: Record<string, unknown> = {}): Promise<StorageDriver> | StorageDriver =>
  ftpDriver.create(
    {
      host: s.host, port: s.port, user: s.user, password: s.pass, secure: s.tls,
      tls_fingerprint: s.fingerprint, root: '/pub/store', timeout_s: 5, ...extra,
    },
    { stateDir: '/nonexistent', uid: 'test' },
  );

const text = (s: string) => Readable.from([Buffer.from(s)]);

async function expectCode(p: Promise<unknown>, code: ErrorCode, reason?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isAppError(e), `expected AppError ${code}, got ${String(e)}`);
    assert.equal(e.code, code, `got ${e.code}: ${e.message}`);
    if (reason) assert.match(String(e.params.reason), reason);
    return true;
  });
}

async function names(d: StorageDriver, dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of d.list(dir)) out.push(e.name);
  return out.sort();
}

if (!skip) {
  driverConformance('ftp (vsftpd, explicit FTPS, pinned certificate)', async () => {
    const server = await startVsftpd({ tls: 'explicit' });
    const driver = await driverFor(server);
    return { driver, teardown: async () => { await driver.close(); await server.teardown(); } };
  });
}

describe('ftp driver', { skip }, () => {
  let server: Vsftpd;
  before(async () => {
    server = await startVsftpd({ denyFile: '{*.exe}' });
  });
  after(async () => {
    await server?.teardown();
  });

  test('descriptor marks the root field, the secret and the aliases', () => {
    const fields = Object.fromEntries(ftpDriver.descriptor.fields.map((f) => [f.key, f]));
    assert.equal(fields.root.root, true);
    assert.equal(fields.password.secret, true);
    assert.deepEqual(fields.user.aliases, ['username']);
    assert.deepEqual(fields.secure.options, ['explicit', 'implicit', 'off']);
    assert.equal(ftpDriver.descriptor.fields.filter((f) => f.root).length, 1);
  });

  test('validate refuses the server root, bad hosts, ports, modes and pins, listing every problem', () => {
    const problems = ftpDriver.validate!({ host: 'a b', port: 70000, secure: 'sometimes', root: '//', tls_fingerprint: 'xyz' });
    assert.deepEqual(problems.map((p) => p.field).sort(), ['host', 'port', 'root', 'secure', 'tls_fingerprint']);
    assert.deepEqual(ftpDriver.validate!({ host: 'nas.local', username: 'bob', secure: false, base_path: 'files' }), []);
    assert.deepEqual(ftpDriver.validate!({ host: '10.0.0.2', secure: 'implicit', root: 'x/./y' }).map((p) => p.field), ['root']);
  });

  test('LIST dates: recent ones carry minutes, older ones a year; all UTC', () => {
    const now = Date.UTC(2026, 10, 21, 12);
    assert.equal(parseListTime('Nov 21 09:43', now), Date.UTC(2026, 10, 21, 9, 43));
    assert.equal(parseListTime('Dec 30 23:59', now), Date.UTC(2025, 11, 30, 23, 59));
    assert.equal(parseListTime('Mar  3  2024', now), Date.UTC(2024, 2, 3));
    assert.equal(parseListTime('garbage', now), 0);
  });

  test('plain FTP: root created on first use, relative roots start at the login folder', async () => {
    const d = await driverFor(server, { root: 'pub/relative/root' });
    await d.write('x.txt', text('x'), { size: 1 });
    assert.equal(readFileSync(join(server.rootDir, 'pub/relative/root/x.txt'), 'utf8'), 'x');
    await d.close();
  });

  test('a server that accepts but never answers times out as storage_unreachable', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    const d = await ftpDriver.create({ host: '127.0.0.1', port, secure: 'off', root: '/x', timeout_s: 1 }, { stateDir: '/nonexistent', uid: 'test' });
    const t0 = Date.now();
    await expectCode(d.stat(''), 'storage_unreachable');
    assert.ok(Date.now() - t0 < 4000, `gave up after ${Date.now() - t0} ms`);
    await d.close();
    silent.close();
    for (const socket of sockets) socket.destroy();
  });

  test('wrong password is storage_unreachable and names the refusal', async () => {
    const d = await driverFor(server, { password: 'wrong' });
    await expectCode(d.stat(''), 'storage_unreachable', /login refused: 530/);
    await d.close();
  });

  test('unreachable server is storage_unreachable, then recovers without a new driver', async () => {
    const d = await driverFor(server, { root: '/pub/outage' });
    await d.write('before.txt', text('1'), { size: 1 });
    await server.stop();
    await expectCode(d.stat('before.txt'), 'storage_unreachable');
    await expectCode(d.stat('before.txt'), 'storage_unreachable', /ECONNREFUSED/);
    await server.start();
    assert.equal((await d.stat('before.txt')).size, 1);
    assert.deepEqual(await names(d, ''), ['before.txt']);
    await d.close();
  });

  test('a server restart between two calls is invisible to the caller', async () => {
    const d = await driverFor(server, { root: '/pub/restart' });
    await d.write('kept.txt', text('kept'), { size: 4 });
    await server.stop();
    await server.start();
    assert.equal((await d.stat('kept.txt')).size, 4);
    await d.close();
  });

  test('a server that dies mid-upload: clear error, old content kept, no temp file visible', async () => {
    const d = await driverFor(server, { root: '/pub/crash' });
    await d.write('f.bin', text('old'), { size: 3 });
    const body = slowBody(64 * 1024, 200);
    const pending = d.write('f.bin', body.stream, { size: 64 * 1024 * 200 });
    pending.catch(() => undefined); // judged below, after the crash
    await body.sent(5);
    await server.crash();
    await expectCode(pending, 'storage_unreachable');
    await server.start();
    assert.equal(readFileSync(join(server.rootDir, 'pub/crash/f.bin'), 'utf8'), 'old');
    assert.deepEqual(await names(d, ''), ['f.bin']);
    await d.close();
  });

  test('a download cut by the server fails the stream instead of ending it short', async () => {
    const d = await driverFor(server, { root: '/pub/drop-read' });
    await d.write('big.bin', Readable.from([Buffer.alloc(32 * MiB, 7)]), { size: 32 * MiB });
    const stream = await d.read('big.bin');
    let got = 0;
    const done = (async () => {
      for await (const c of stream) {
        got += (c as Buffer).length;
        if (got >= MiB && got - (c as Buffer).length < MiB) await server.crash();
        await new Promise((r) => setImmediate(r));
      }
    })();
    await expectCode(done, 'storage_unreachable');
    assert.ok(got < 32 * MiB);
    await server.start();
    await d.close();
  });

  test('a name the server forbids is refused and leaves nothing behind', async () => {
    const d = await driverFor(server, { root: '/pub/deny' });
    await expectCode(d.write('tool.exe', text('MZ'), { size: 2 }), 'permission_denied');
    assert.deepEqual(await names(d, ''), []);
    assert.deepEqual(readdirSync(join(server.rootDir, 'pub/deny')), [], 'the temp upload was removed');
    await d.close();
  });

  test('parallel calls share at most two sessions and all succeed', async () => {
    const d = await driverFor(server, { root: '/pub/pool' });
    await Promise.all(Array.from({ length: 6 }, (_, i) => d.write(`f${i}.txt`, text(`v${i}`), { size: 2 })));
    const reads = await Promise.all(Array.from({ length: 6 }, async (_, i) => {
      const chunks: Buffer[] = [];
      for await (const c of await d.read(`f${i}.txt`)) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString();
    }));
    assert.deepEqual(reads, ['v0', 'v1', 'v2', 'v3', 'v4', 'v5']);
    assert.equal((await names(d, '')).length, 6);
    await d.close();
  });

  test('1 GiB upload streams in flat memory', { timeout: 120_000 }, async (t) => {
    const d = await driverFor(server, { root: '/pub/gib' });
    const t0 = Date.now();
    const { growth, entry } = await flatMemoryUpload(d, 'one.gib', 1024 * MiB);
    t.diagnostic(`1 GiB in ${Date.now() - t0} ms, RSS growth ${Math.round(growth / MiB)} MiB`);
    assert.equal(entry.size, 1024 * MiB);
    assert.ok(growth < 100 * MiB, `RSS grew by ${Math.round(growth / MiB)} MiB`);
    await d.delete('one.gib');
    assert.ok(!existsSync(join(server.rootDir, 'pub/gib/one.gib')));
    await d.close();
  });
});

for (const mode of ['explicit', 'implicit'] as const) {
  describe(`ftp driver over ${mode} TLS`, { skip }, () => {
    let server: Vsftpd;
    before(async () => {
      server = await startVsftpd({ tls: mode });
    });
    after(async () => {
      await server?.teardown();
    });

    test('a self-signed certificate is refused by default', async () => {
      const d = await driverFor(server, { tls_fingerprint: undefined });
      await expectCode(d.stat(''), 'storage_unreachable', /self.signed/i);
      await d.close();
    });

    test('allow_self_signed accepts it; data moves over TLS both ways', async () => {
      const d = await driverFor(server, { tls_fingerprint: undefined, allow_self_signed: true, root: '/pub/any' });
      await d.write('a.txt', text('tls'), { size: 3 });
      assert.equal(readFileSync(join(server.rootDir, 'pub/any/a.txt'), 'utf8'), 'tls');
      assert.deepEqual(await names(d, ''), ['a.txt']);
      await d.close();
    });

    test('the pinned fingerprint is accepted; another one is refused before login', async () => {
      const good = await driverFor(server, { root: '/pub/pinned' });
      await good.write('p.txt', text('pin'), { size: 3 });
      assert.equal(readFileSync(join(server.rootDir, 'pub/pinned/p.txt'), 'utf8'), 'pin');
      await good.close();
      const bad = await driverFor(server, { tls_fingerprint: '11'.repeat(32), root: '/pub/never' });
      await expectCode(bad.stat(''), 'storage_unreachable', /fingerprint mismatch/);
      assert.ok(!existsSync(join(server.rootDir, 'pub/never')));
      await bad.close();
    });

    if (mode === 'explicit') {
      test('plain FTP against a server that requires TLS is refused with its reason', async () => {
        const d = await driverFor(server, { secure: 'off', tls_fingerprint: undefined });
        await expectCode(d.stat(''), 'storage_unreachable', /530|encryption|SSL|TLS/i);
        await d.close();
      });
    }
  });
}
