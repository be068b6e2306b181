/**
 * The NFS gateway's READ and publish paths on a real server (raw RPC over
 * TCP, test/helpers/nfs-client.ts): READ replies are byte-exact whatever the
 * offset, length and order (the reply's data goes out as its own buffer, the
 * next span read ahead, the open file kept for a second); a file changed
 * through NFS is read anew at once, one changed on the disk within a
 * second; a big stage is published by moving it into place (same inode),
 * a small one by copying it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { NFS, RpcClient, dirop, mountRoot } from '../helpers/nfs-client';

const MiB = 1 << 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** READ: status, data, eof. */
async function read(c: RpcClient, fh: Buffer, offset: number, count: number): Promise<{ status: number; data: Buffer; eof: boolean }> {
  const { r } = await c.call(NFS, 6, (w) => w.opaque(fh).u64(offset).u32(count));
  const status = r.u32();
  if (r.bool()) r.fixed(84);
  if (status !== 0) return { status, data: Buffer.alloc(0), eof: false };
  const n = r.u32();
  const eof = r.bool();
  const data = Buffer.from(r.opaque(count));
  assert.equal(data.length, n, 'count and data agree');
  return { status, data, eof };
}

describe('NFS gateway: READ and publish paths', () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  let c: RpcClient;
  let box: Buffer;
  const big = randomBytes(3 * MiB + 5);

  const lookup = async (dir: Buffer, name: string) => {
    const { r } = await c.call(NFS, 3, (w) => dirop(w, dir, name));
    assert.equal(r.u32(), 0, `LOOKUP ${name}`);
    return Buffer.from(r.opaque(64));
  };

  /** CREATE, WRITE (1 MiB at a time, UNSTABLE), COMMIT; the stage's inode as seen while pending. */
  const writeFile = async (name: string, body: Buffer): Promise<number> => {
    const made = await c.call(NFS, 8, (w) => dirop(w, box, name).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0));
    assert.equal(made.r.u32(), 0, 'CREATE ok');
    made.r.u32();
    const fh = Buffer.from(made.r.opaque(64));
    for (let at = 0; at < body.length; at += MiB) {
      const part = body.subarray(at, at + MiB);
      const w = await c.call(NFS, 7, (x) => x.opaque(fh).u64(at).u32(part.length).u32(0), 3, part);
      assert.equal(w.r.u32(), 0, 'WRITE ok');
    }
    const stages = join(s.dataDir, 'staging/nfs');
    const parts = readdirSync(stages);
    assert.equal(parts.length, 1, 'one stage while the file is pending');
    const ino = statSync(join(stages, parts[0])).ino;
    assert.equal((await c.call(NFS, 21, (x) => x.opaque(fh).u64(0).u32(0))).r.u32(), 0, 'COMMIT ok');
    assert.deepEqual(readdirSync(stages), [], 'the stage is gone once published');
    return ino;
  };

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-gw-nfs-io-'));
    mkdirSync(join(root, 'io'));
    writeFileSync(join(root, 'io/big.bin'), big);
    writeFileSync(join(root, 'io/odd.txt'), 'abcdefg');
    s = await startTestServer({ SERVICE_NFS_LISTEN: '127.0.0.1:0' });
    const admin = await s.login();
    await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } });
    const me = (await s.api('GET', '/api/auth/me', { token: admin })).body;
    const made = await s.api('POST', '/api/admin/gateways/nfs/exports', {
      token: admin,
      body: { path: '/Box', clients: '127.0.0.1', user_id: me.user?.id ?? me.id },
    });
    assert.equal(made.status, 201);
    const g = s.server.services.gateways.registry.status().gateways.find((x) => x.protocol === 'nfs')!;
    c = await RpcClient.open(Number(g.listen!.split(':').at(-1)));
    box = await lookup(await mountRoot(c, '/Box'), 'io');
  });
  after(async () => {
    c?.close();
    await s?.close();
    cleanup?.();
  });

  test('READ is byte-exact at odd offsets and lengths, sequential, out of order, pipelined, and at EOF', async () => {
    const fh = await lookup(box, 'big.bin');
    // Sequential 1 MiB READs, one at a time (what nfs-cp sends): each next one meets the read-ahead.
    const got: Buffer[] = [];
    for (let at = 0, eof = false; !eof; ) {
      const r = await read(c, fh, at, MiB);
      got.push(r.data);
      at += r.data.length;
      eof = r.eof;
    }
    assert.ok(Buffer.concat(got).equals(big), 'sequential READs give the file');
    // Odd offsets and lengths (data padded to four bytes in the reply), backwards, and a read-ahead missed.
    for (const [at, n] of [
      [1, 3],
      [MiB - 1, 2],
      [3 * MiB + 1, 7],
      [2 * MiB + 3, MiB],
      [5, MiB - 3],
      [MiB + 7, 13],
      [0, 1],
    ]) {
      const r = await read(c, fh, at, n);
      assert.ok(r.data.equals(big.subarray(at, at + n)), `bytes ${at}+${n}`);
      assert.equal(r.eof, at + n >= big.length, `eof at ${at}+${n}`);
    }
    // Eight at once, in reverse order.
    const spans = Array.from({ length: 8 }, (_, i) => 7 - i).map((i) => i * 400_001);
    const all = await Promise.all(spans.map((at) => read(c, fh, at, 400_001)));
    all.forEach((r, i) => assert.ok(r.data.equals(big.subarray(spans[i], spans[i] + 400_001)), `pipelined READ at ${spans[i]}`));
    // At and past the end: what is left, then nothing, with eof.
    const tail = await read(c, fh, big.length - 2, MiB);
    assert.ok(tail.data.equals(big.subarray(big.length - 2)) && tail.eof);
    const past = await read(c, fh, big.length + 10, 100);
    assert.equal(past.status, 0);
    assert.equal(past.data.length, 0);
    assert.ok(past.eof);
    const odd = await read(c, await lookup(box, 'odd.txt'), 2, 100);
    assert.equal(odd.data.toString(), 'cdefg');
    assert.ok(odd.eof);
  });

  test('a file rewritten over NFS is read anew at once; one replaced on the disk within a second', async () => {
    writeFileSync(join(root, 'io/again.bin'), randomBytes(2 * MiB));
    await s.api('GET', '/api/files/manager?path=/Box/io', { token: await s.login() });
    const fh = await lookup(box, 'again.bin');
    assert.equal((await read(c, fh, 0, 16)).status, 0, 'read once: the open file is kept');
    const next = randomBytes(2 * MiB);
    await writeFile('again.bin', next);
    assert.ok((await read(c, await lookup(box, 'again.bin'), 0, MiB)).data.equals(next.subarray(0, MiB)), 'the published bytes at once');
    // Another program replaces it (a new file renamed over it): seen once the kept open file is a second old.
    const third = randomBytes(2 * MiB);
    writeFileSync(join(root, 'io/.third'), third);
    renameSync(join(root, 'io/.third'), join(root, 'io/again.bin'));
    await sleep(1100);
    const fresh = await read(c, await lookup(box, 'again.bin'), MiB, MiB);
    assert.ok(fresh.data.equals(third.subarray(MiB)), 'the replaced file is read');
  });

  test('UNSTABLE WRITEs, 8 in flight, answered before their bytes are on the stage, land byte-exact; READ before COMMIT sees them', async () => {
    const made = await c.call(NFS, 8, (w) => dirop(w, box, 'piped.bin').u32(0).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0));
    assert.equal(made.r.u32(), 0, 'CREATE ok');
    made.r.u32();
    const fh = Buffer.from(made.r.opaque(64));
    // 24 distinct MiB: a record buffer reused before its bytes were written would show as another MiB's bytes.
    const body = randomBytes(24 * MiB);
    const order = Array.from({ length: 24 }, (_, i) => (i * 7) % 24);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < order.length) {
          const at = order[next++] * MiB;
          const w = await c.call(NFS, 7, (x) => x.opaque(fh).u64(at).u32(MiB).u32(0), 3, body.subarray(at, at + MiB));
          assert.equal(w.r.u32(), 0, 'WRITE ok');
        }
      }),
    );
    // The same MiB written again, each WRITE sent once the last is answered (its bytes maybe still on their way): the last wins.
    for (let i = 0; i < 3; i++) {
      randomBytes(MiB).copy(body, 2 * MiB);
      const w = await c.call(
        NFS,
        7,
        (x) =>
          x
            .opaque(fh)
            .u64(2 * MiB)
            .u32(MiB)
            .u32(0),
        3,
        body.subarray(2 * MiB, 3 * MiB),
      );
      assert.equal(w.r.u32(), 0, 'WRITE again ok');
    }
    for (const at of [0, 2 * MiB, 5 * MiB + 3, 23 * MiB])
      assert.ok((await read(c, fh, at, MiB)).data.equals(body.subarray(at, at + MiB)), `pending bytes at ${at}`);
    assert.equal((await c.call(NFS, 21, (x) => x.opaque(fh).u64(0).u32(0))).r.u32(), 0, 'COMMIT ok');
    assert.ok(readFileSync(join(root, 'io/piped.bin')).equals(body), 'published byte-exact');
  });

  test('a big stage is published by moving it into place; a small one is copied', async () => {
    const body = randomBytes(2 * MiB + 3);
    const ino = await writeFile('moved.bin', body);
    const published = join(root, 'io/moved.bin');
    assert.ok(readFileSync(published).equals(body));
    assert.equal(statSync(published).ino, ino, 'the stage itself became the file (renamed, not copied)');
    assert.equal(statSync(published).mode & 0o777, 0o644);
    const small = randomBytes(70_000);
    const smallIno = await writeFile('copied.bin', small);
    assert.ok(readFileSync(join(root, 'io/copied.bin')).equals(small));
    assert.notEqual(statSync(join(root, 'io/copied.bin')).ino, smallIno, 'a small stage is streamed into the storage');
    const listed = (await s.api('GET', '/api/files/manager?path=/Box/io', { token: await s.login() })).body.entries.map((e: { name: string }) => e.name);
    assert.ok(listed.includes('moved.bin') && listed.includes('copied.bin'), 'both published through the file service');
  });
});
