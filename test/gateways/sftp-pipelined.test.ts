/**
 * SFTP gateway uploads with many requests in flight, as fast clients send
 * them (OpenSSH keeps 64 writes of 32 KiB outstanding): writes out of order
 * land byte-exact, their answers leave packed into full SSH packets (counted
 * by ssh2's client, whose debug log names every packet it receives), a client
 * gone mid-upload leaves nothing, and a writer that never waits stays inside
 * the session's memory bound (the gateway's `heldPeak`).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { SFTPWrapper } from 'ssh2';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { p, sshConnect } from '../helpers/sftp-clients';
import { createLogger } from '../../server/lib/log';
import { loadHostKey } from '../../server/gateways/sftp/host-key';
import { createSftpServer } from '../../server/gateways/sftp/server';

const KiB = 1024;
const MiB = 1024 * KiB;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('SFTP gateway, pipelined transfers', () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  let gw: ReturnType<typeof createSftpServer>;
  let port: number;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-gw-sftp-pipe-'));
    s = await startTestServer({});
    const admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } }))
        .status,
      200,
    );
    // The gateway's own server over the running service's core: its stats are the test's to read.
    gw = createSftpServer({
      core: s.server.services.gateways,
      hostKey: loadHostKey(join(root, '..', `${root.split('/').pop()}-hostkey`)),
      log: createLogger('error'),
      restore: async (a) => a,
    });
    await new Promise<void>((r) => gw.server.listen(0, '127.0.0.1', r));
    port = (gw.server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const c of gw.clients) c.end();
    await new Promise((r) => gw.server.close(r));
    await s.close();
    cleanup();
  });

  /** A session whose client counts the SSH data packets it receives. */
  const session = async () => {
    const counted = { packets: 0 };
    const ssh = await sshConnect(port, {
      username: ADMIN.email,
      password: ADMIN.password,
      debug: (line) => void (line.startsWith('Inbound: CHANNEL_DATA') && counted.packets++),
    });
    return { ssh, sftp: await ssh.sftp(), counted };
  };

  test('256 writes of 32 KiB, all in flight and shuffled within windows of 64, land byte-exact; their answers leave packed (fewer SSH packets than writes)', async () => {
    const { ssh, sftp, counted } = await session();
    const size = 32 * KiB;
    const body = randomBytes(256 * size);
    const h = await p.open(sftp, '/Box/pipelined.bin', 'w');
    const order = Array.from({ length: 256 }, (_, i) => i);
    // Out of order, each within 2 MiB of the gap: what a pipelining client's reordered packets look like.
    for (let w = 0; w < 256; w += 64) {
      const win = order.slice(w, w + 64);
      for (let i = win.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [win[i], win[j]] = [win[j], win[i]];
      }
      order.splice(w, 64, ...win);
    }
    const before = counted.packets;
    await Promise.all(order.map((i) => p.write(sftp, h, body.subarray(i * size, (i + 1) * size), i * size)));
    const answers = counted.packets - before;
    await p.close(sftp, h);
    assert.equal(sha(readFileSync(join(root, 'pipelined.bin'))), sha(body), 'byte-exact');
    // One packet per answer before packing; a loaded machine still answers many per turn of the loop.
    assert.ok(answers <= 128, `256 answers came in ${answers} SSH packets`);
    ssh.end();
  });

  test('a client gone with 64 writes in flight: nothing visible, no temp file left', async () => {
    const { ssh, sftp } = await session();
    const h = await p.open(sftp, '/Box/gone.bin', 'w');
    const chunk = randomBytes(32 * KiB);
    const writes = Array.from({ length: 64 }, (_, i) => p.write(sftp, h, chunk, i * chunk.length).catch(() => undefined));
    await writes[8];
    ssh.client.destroy();
    await Promise.all(writes);
    // The server drops the upload (and its temp file) when it sees the connection close: polled, with a generous bound.
    for (let i = 0; i < 400 && readdirSync(root).some((n) => n.includes('gone')); i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(existsSync(join(root, 'gone.bin')), false);
    assert.deepEqual(
      readdirSync(root).filter((n) => n.includes('gone')),
      [],
      'no temp file beside it',
    );
  });

  test('a writer that never waits for answers: the session holds at most 32 MiB unstored; each file is whole or absent', async () => {
    const { ssh, sftp } = await session();
    const size = 32 * KiB;
    const files = 4;
    const body = randomBytes(1024 * size);
    const all = async (sftp: SFTPWrapper, name: string) => {
      const h = await p.open(sftp, `/Box/${name}`, 'w');
      // 1,024 writes sent at once, none waiting for the one before.
      const codes = await Promise.all(Array.from({ length: 1024 }, (_, i) => p.code(p.write(sftp, h, body.subarray(i * size, (i + 1) * size), i * size))));
      const closed = await p.code(p.close(sftp, h));
      return { codes, closed };
    };
    const results = await Promise.all(Array.from({ length: files }, (_, i) => all(sftp, `fast${i}.bin`)));
    assert.ok(gw.stats.heldPeak > 0 && gw.stats.heldPeak <= 32 * MiB, `held at most ${gw.stats.heldPeak} bytes`);
    results.forEach((r, i) => {
      const path = join(root, `fast${i}.bin`);
      if (r.codes.every((c) => c === 0) && r.closed === 0) assert.equal(sha(readFileSync(path)), sha(body));
      else assert.equal(existsSync(path), false, 'a refused upload publishes nothing');
    });
    ssh.end();
  });
});
