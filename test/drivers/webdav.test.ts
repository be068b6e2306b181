/**
 * The webdav driver against a real `rclone serve webdav` on loopback: the
 * shared conformance suite, then what only a network driver has to get right
 * (credentials, outages and recovery, TLS trust, a server dying mid-upload,
 * a 1 GiB upload in flat memory).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { isAppError, type ErrorCode } from '../../server/errors';
import type { StorageDriver } from '../../server/storage/types';
import { webdavDriver } from '../../server/storage/drivers/webdav';
import { needTool } from '../helpers/tools';
import { flatMemoryUpload, slowBody, startRcloneWebdav, type RcloneWebdav } from '../helpers/rclone-webdav';
import { driverConformance } from './conformance';

const skip = needTool('rclone', 'rclone') ?? undefined;
const MiB = 1024 * 1024;
const text = (s: string) => Readable.from([Buffer.from(s)]);

const driverFor = (s: RcloneWebdav, extra: Record<string, unknown> = {}): Promise<StorageDriver> | StorageDriver =>
  webdavDriver.create(
    { url: s.url, root: '/store', username: s.user, password: s.pass, timeout_s: 5, ...extra },
    { stateDir: '/nonexistent', uid: 'test' },
  );

async function expectCode(p: Promise<unknown>, code: ErrorCode, reason?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isAppError(e), `expected AppError ${code}, got ${String(e)}`);
    assert.equal(e.code, code, `got ${e.code}: ${e.message}`);
    if (reason) assert.match(String(e.params.reason), reason);
    return true;
  });
}

if (!skip) {
  driverConformance('webdav (rclone serve webdav)', async () => {
    const server = await startRcloneWebdav();
    const driver = await driverFor(server);
    return { driver, teardown: async () => { await driver.close(); await server.teardown(); } };
  });
}

describe('webdav driver', { skip }, () => {
  let server: RcloneWebdav;
  before(async () => {
    server = await startRcloneWebdav();
  });
  after(async () => {
    await server?.teardown();
  });

  test('descriptor marks the root field, the secret and the aliases', () => {
    const fields = Object.fromEntries(webdavDriver.descriptor.fields.map((f) => [f.key, f]));
    assert.equal(fields.root.root, true);
    assert.equal(fields.password.secret, true);
    assert.deepEqual(fields.username.aliases, ['user']);
    assert.equal(webdavDriver.descriptor.fields.filter((f) => f.root).length, 1);
  });

  test('validate refuses the server root, bad URLs, bad pins and lists every problem', () => {
    const problems = webdavDriver.validate!({ url: 'ftp://x', root: '/', tls_fingerprint: 'abc', timeout_s: 0 });
    assert.deepEqual(problems.map((p) => p.field).sort(), ['root', 'timeout_s', 'tls_fingerprint', 'url']);
    assert.deepEqual(webdavDriver.validate!({ endpoint: 'https://nas/dav', base_path: 'team/docs' }), []);
    assert.deepEqual(webdavDriver.validate!({ url: 'http://h', root: 'a/../..' }).map((p) => p.field), ['root']);
  });

  test('creates the root folder on first use', async () => {
    const d = await driverFor(server, { root: '/auto/created' });
    assert.equal((await d.stat('')).type, 'dir');
    assert.ok(existsSync(join(server.dir, 'auto/created')));
    await d.close();
  });

  test('a server that accepts but never answers times out as storage_unreachable', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    const d = await webdavDriver.create({ url: `http://127.0.0.1:${port}`, root: '/x', timeout_s: 1 }, { stateDir: '/nonexistent', uid: 'test' });
    const t0 = Date.now();
    await expectCode(d.stat(''), 'storage_unreachable');
    assert.ok(Date.now() - t0 < 4000, `gave up after ${Date.now() - t0} ms`);
    await d.close();
    silent.close();
    for (const socket of sockets) socket.destroy();
  });

  test('wrong password is storage_unreachable and names the refusal', async () => {
    const d = await driverFor(server, { password: 'wrong' });
    await expectCode(d.stat(''), 'storage_unreachable', /401/);
    await d.close();
  });

  test('unreachable host is storage_unreachable, then recovers without a new driver', async () => {
    const d = await driverFor(server, { root: '/outage' });
    await d.write('before.txt', Readable.from([Buffer.from('1')]), { size: 1 });
    await server.stop();
    const t0 = Date.now();
    await expectCode(d.stat('before.txt'), 'storage_unreachable', /ECONNREFUSED/);
    assert.ok(Date.now() - t0 < 5000, 'a refused connection fails fast');
    await server.start();
    assert.equal((await d.stat('before.txt')).size, 1);
    await d.close();
  });

  test('a server restart between two calls is invisible to the caller', async () => {
    const d = await driverFor(server, { root: '/restart' });
    await d.write('kept.txt', text('kept'), { size: 4 });
    await server.stop();
    await server.start();
    assert.equal((await d.stat('kept.txt')).size, 4);
    await d.close();
  });

  test('a server that dies mid-upload: clear error, old content kept, no temp file left visible', async () => {
    const d = await driverFor(server, { root: '/crash' });
    await d.write('f.bin', Readable.from([Buffer.from('old')]), { size: 3 });
    const body = slowBody(64 * 1024, 200);
    const pending = d.write('f.bin', body.stream, { size: 64 * 1024 * 200 });
    pending.catch(() => undefined); // judged below, after the crash
    await body.sent(5);
    await server.crash();
    await expectCode(pending, 'storage_unreachable');
    await server.start();
    assert.equal(readFileSync(join(server.dir, 'crash/f.bin'), 'utf8'), 'old');
    const names: string[] = [];
    for await (const e of d.list('')) names.push(e.name);
    assert.deepEqual(names, ['f.bin']);
    await d.close();
  });

  test('read of a dropped download fails the stream instead of ending it short', async () => {
    const d = await driverFor(server, { root: '/drop-read' });
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
    await assert.rejects(done);
    assert.ok(got < 32 * MiB);
    await server.start();
    await d.close();
  });

  test('1 GiB upload streams in flat memory', { timeout: 120_000 }, async (t) => {
    const d = await driverFor(server, { root: '/gib' });
    const t0 = Date.now();
    const { growth, entry } = await flatMemoryUpload(d, 'one.gib', 1024 * MiB);
    t.diagnostic(`1 GiB in ${Date.now() - t0} ms, RSS growth ${Math.round(growth / MiB)} MiB`);
    assert.equal(entry.size, 1024 * MiB);
    assert.ok(growth < 100 * MiB, `RSS grew by ${Math.round(growth / MiB)} MiB`);
    await d.delete('one.gib');
    await d.close();
  });
});

describe('webdav driver over TLS', { skip }, () => {
  let server: RcloneWebdav;
  before(async () => {
    server = await startRcloneWebdav({ tls: true });
  });
  after(async () => {
    await server?.teardown();
  });

  test('a self-signed certificate is refused by default', async () => {
    const d = await driverFor(server);
    await expectCode(d.stat(''), 'storage_unreachable', /self.signed/i);
    await d.close();
  });

  test('allow_self_signed accepts it', async () => {
    const d = await driverFor(server, { allow_self_signed: true });
    await d.write('a.txt', Readable.from([Buffer.from('tls')]), { size: 3 });
    assert.equal(readFileSync(join(server.dir, 'store/a.txt'), 'utf8'), 'tls');
    await d.close();
  });

  test('the pinned fingerprint is accepted; another one is refused before any request', async () => {
    const good = await driverFor(server, { tls_fingerprint: server.fingerprint, root: '/pinned' });
    assert.equal((await good.stat('')).type, 'dir');
    await good.close();
    const wrong = 'sha256:' + '00'.repeat(32);
    const bad = await driverFor(server, { tls_fingerprint: wrong, root: '/never' });
    await expectCode(bad.stat(''), 'storage_unreachable', /fingerprint mismatch/);
    assert.ok(!readdirSync(server.dir).includes('never'), 'no request reached the server');
    await bad.close();
  });
});
