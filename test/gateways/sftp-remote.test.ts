/**
 * The SFTP gateway over a storage that is not a local disk (an sftp storage
 * on a real OpenSSH server): reads go through the driver's stream (reopened
 * on a seek), writes through the driver's temp file and rename. OpenSSH's
 * `sftp` gets and puts byte for byte; ssh2 reads ranges out of order.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { startSshd, type SshdServer } from '../helpers/sshd';
import { p, sftpBatch, sshConnect } from '../helpers/sftp-clients';

const skip = needTool('sshd', 'openssh-server') ?? needTool('sshpass', 'sshpass');

describe('SFTP gateway over a remote storage', { skip: skip ?? false }, () => {
  let s: TestServer;
  let sshd: SshdServer;
  let remote: string;
  let local: { dir: string; cleanup: () => void };
  let port: number;
  const big = randomBytes(2 * 1024 * 1024 + 333);

  before(async () => {
    sshd = await startSshd();
    remote = join(sshd.dataDir, 'remote');
    mkdirSync(remote);
    writeFileSync(join(remote, 'big.bin'), big);
    local = tempDir('filedock-gw-remote-');
    s = await startTestServer({ SERVICE_SFTP_LISTEN: '127.0.0.1:0' });
    const admin = await s.login();
    const made = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: {
        name: 'Far',
        driver: 'sftp',
        config: { host: sshd.host, port: sshd.port, user: sshd.user, private_key: sshd.clientKey, root: remote, host_key: sshd.hostKeyLine() },
      },
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    port = Number(
      s.server.services.gateways.registry
        .status()
        .gateways.find((x) => x.protocol === 'sftp')!
        .listen!.split(':')
        .at(-1),
    );
  });
  after(async () => {
    await s?.close();
    await sshd?.dispose();
    local?.cleanup();
  });

  test('get and put byte for byte with OpenSSH sftp; ranges out of order with ssh2', async () => {
    writeFileSync(join(local.dir, 'up.bin'), big.subarray(0, 1_000_001));
    const r = await sftpBatch(port, ADMIN.email, ADMIN.password, [
      'cd Far',
      `get big.bin ${join(local.dir, 'big.bin')}`,
      `put ${join(local.dir, 'up.bin')} up.bin`,
      'ls -l',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(readFileSync(join(local.dir, 'big.bin')).equals(big));
    assert.ok(readFileSync(join(remote, 'up.bin')).equals(big.subarray(0, 1_000_001)), 'the upload reached the remote server whole');

    const ssh = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
    const sftp = await ssh.sftp();
    const h = await p.open(sftp, '/Far/big.bin', 'r');
    for (const at of [1_500_000, 10, 2 * 1024 * 1024, 700_000, 711_000]) {
      assert.ok((await p.read(sftp, h, 5000, at)).equals(big.subarray(at, at + 5000)), `bytes at ${at}`);
    }
    await p.close(sftp, h);
    ssh.end();
  });
});
