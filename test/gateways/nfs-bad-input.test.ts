/**
 * The NFS gateway refuses bad input and stays up: malformed XDR, a 2 GB
 * record mark, READ and WRITE counts past FSINFO's maxima, forged and stale
 * handles, an address outside an export's list, 1,000 connections at once.
 * Raw RPC over TCP (test/helpers/nfs-client.ts): these are what real clients
 * never send.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { MOUNT, NFS, RpcClient, dirop, mountRoot } from '../helpers/nfs-client';
import { MAX_CONNECTIONS } from '../../server/gateways/nfs';

describe('NFS gateway: bad input', () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  let port: number;
  let fh: Buffer;
  let c: RpcClient;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-gw-nfs-bad-'));
    mkdirSync(join(root, 'far'));
    writeFileSync(join(root, 'big.bin'), randomBytes(3 << 20));
    s = await startTestServer({ SERVICE_NFS_LISTEN: '127.0.0.1:0' });
    const admin = await s.login();
    await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } });
    const me = (await s.api('GET', '/api/auth/me', { token: admin })).body;
    const user_id = me.user?.id ?? me.id;
    assert.equal(
      (await s.api('POST', '/api/admin/gateways/nfs/exports', { token: admin, body: { path: '/Box', clients: '127.0.0.0/8', user_id } })).status,
      201,
    );
    assert.equal(
      (await s.api('POST', '/api/admin/gateways/nfs/exports', { token: admin, body: { path: '/Box/far', clients: '10.0.0.0/8, fd00::/8', user_id } })).status,
      201,
    );
    const bad = await s.api('POST', '/api/admin/gateways/nfs/exports', { token: admin, body: { path: '/Box', clients: '10.0.0.0/99', user_id } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details.field, 'clients');
    const g = s.server.services.gateways.registry.status().gateways.find((x) => x.protocol === 'nfs')!;
    port = Number(g.listen!.split(':').at(-1));
    c = await RpcClient.open(port);
    fh = await mountRoot(c, '/Box');
  });
  after(async () => {
    c?.close();
    await s?.close();
    cleanup?.();
  });

  const alive = async () => {
    const x = await RpcClient.open(port);
    assert.equal((await x.call(NFS, 0)).accept, 0, 'NULL answers');
    x.close();
  };

  test('malformed XDR → GARBAGE_ARGS; unknown program, version, procedure → their replies', async () => {
    assert.equal((await c.call(NFS, 1, (w) => w.u32(64))).accept, 4, 'a handle longer than the call');
    assert.equal((await c.call(NFS, 1, (w) => w.u32(80).fixed(Buffer.alloc(80)))).accept, 4, 'a handle past NFSv3 64 bytes');
    assert.equal((await c.call(NFS, 6, (w) => w.opaque(fh).u32(0xffffffff).u32(0).u32(1))).accept, 4, 'an offset past 2^53');
    assert.equal((await c.call(424242, 0)).accept, 1);
    assert.equal((await c.call(NFS, 0, () => undefined, 4)).accept, 2);
    assert.equal((await c.call(NFS, 99)).accept, 3);
    await alive();
  });

  test('a 2 GB record mark closes that connection without allocating it; the service still answers', async () => {
    const x = await RpcClient.open(port);
    const before = process.memoryUsage().rss;
    x.raw(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    await x.closed;
    const y = await RpcClient.open(port);
    y.raw(Buffer.from([0x80, 0x20, 0x00, 0x00, 1, 2, 3])); // 2 MiB, past the 1 MiB + headers bound
    await y.closed;
    assert.ok(process.memoryUsage().rss - before < 256 << 20, 'no 2 GB buffer');
    await alive();
  });

  test('READ past rtmax is served rtmax bytes; WRITE past wtmax → NFS3ERR_INVAL', async () => {
    const look = await c.call(NFS, 3, (w) => dirop(w, fh, 'big.bin'));
    assert.equal(look.r.u32(), 0);
    const file = Buffer.from(look.r.opaque(64));
    const info = await c.call(NFS, 19, (w) => w.opaque(fh));
    assert.equal(info.r.u32(), 0);
    if (info.r.bool()) info.r.fixed(84);
    const rtmax = info.r.u32();
    info.r.u32();
    info.r.u32();
    const wtmax = info.r.u32();
    assert.equal(rtmax, 1 << 20);
    const read = await c.call(NFS, 6, (w) =>
      w
        .opaque(file)
        .u64(0)
        .u32(64 << 20),
    );
    assert.equal(read.r.u32(), 0);
    if (read.r.bool()) read.r.fixed(84);
    assert.equal(read.r.u32(), rtmax, 'READ count clamped');
    const write = await c.call(NFS, 7, (w) =>
      w
        .opaque(file)
        .u64(0)
        .u32(wtmax + 1)
        .u32(0)
        .opaque(Buffer.alloc(wtmax + 1)),
    );
    assert.equal(write.r.u32(), 22, 'NFS3ERR_INVAL');
    await alive();
  });

  test('forged and stale handles: BADHANDLE and STALE', async () => {
    const forged = Buffer.from(fh);
    forged[8] ^= 0x40; // another storage id, same MAC
    assert.equal((await c.call(NFS, 1, (w) => w.opaque(forged))).r.u32(), 10001);
    assert.equal((await c.call(NFS, 1, (w) => w.opaque(randomBytes(fh.length)))).r.u32(), 10001);
    const mk = await c.call(NFS, 9, (w) => dirop(w, fh, 'gone').u32(0).u32(0).u32(0).u32(0).u32(0).u32(0));
    assert.equal(mk.r.u32(), 0);
    mk.r.u32();
    const dir = Buffer.from(mk.r.opaque(64));
    assert.equal((await c.call(NFS, 13, (w) => dirop(w, fh, 'gone'))).r.u32(), 0, 'RMDIR');
    assert.equal((await c.call(NFS, 1, (w) => w.opaque(dir))).r.u32(), 70, 'NFS3ERR_STALE');
    assert.equal((await c.call(NFS, 10, (w) => dirop(w, fh, 'link'))).r.u32(), 10004, 'SYMLINK → NOTSUPP');
  });

  test('an address outside the export: MNT3ERR_ACCES; EXPORT lists only what this address may mount', async () => {
    // /Box/far is its own export for 10.0.0.0/8 and fd00::/8 only: the deepest export holding a path decides.
    assert.equal((await c.call(MOUNT, 1, (w) => w.string('/Box/far'))).r.u32(), 13, 'MNT3ERR_ACCES');
    assert.equal((await c.call(MOUNT, 1, (w) => w.string('/Box/far/'))).r.u32(), 13);
    assert.equal((await c.call(MOUNT, 1, (w) => w.string('/Nope'))).r.u32(), 2, 'MNT3ERR_NOENT');
    assert.equal((await c.call(MOUNT, 1, (w) => w.string('/Box'))).r.u32(), 0, '127.0.0.1 is inside 127.0.0.0/8');
    const ex = await c.call(MOUNT, 5);
    const paths: string[] = [];
    while (ex.r.bool()) {
      paths.push(ex.r.string(1024));
      while (ex.r.bool()) ex.r.string(1024);
    }
    assert.deepEqual(paths, ['/Box']);
  });

  test('1,000 connections at once: bounded by the connection cap; the service answers after', async () => {
    const socks: Socket[] = [];
    let closed = 0;
    await Promise.all(
      Array.from(
        { length: 1000 },
        () =>
          new Promise<void>((resolve) => {
            const k = connect({ host: '127.0.0.1', port }, () => resolve());
            k.on('error', () => resolve());
            k.on('close', () => {
              closed++;
              resolve();
            });
            socks.push(k);
          }),
      ),
    );
    const end = Date.now() + 30_000;
    while (closed < 1000 - MAX_CONNECTIONS - 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    assert.ok(closed >= 1000 - MAX_CONNECTIONS - 2, `the server closed what is over its cap (${closed} closed)`);
    for (const k of socks) k.destroy();
    await new Promise((r) => setTimeout(r, 200));
    await alive();
  });
});
