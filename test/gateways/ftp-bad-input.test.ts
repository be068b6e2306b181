/**
 * The FTPS gateway against bad input: traversal in FTP's path syntax
 * (relative `..`, absolute paths, backslashes, NUL), a client killed
 * mid-upload (raw and lftp: nothing visible, nothing announced), ABOR
 * mid-upload, brute-force passwords throttled like the web sign-in, active
 * mode and APPE refused, overlong lines; from a non-loopback address: TLS
 * required before USER, PROT P before data, the data port taken only from
 * the control connection's address, idle control connections closed.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { RawFtp } from '../helpers/ftp-client';

const ZED = { email: 'zed@example.test', username: 'zed', password: 'zed-password-1' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ftpPort = (s: TestServer) =>
  Number(
    s.server.services.gateways.registry
      .status()
      .gateways.find((g) => g.protocol === 'ftp')!
      .listen!.split(':')
      .pop(),
  );
const visible = (dir: string) =>
  readdirSync(dir)
    .filter((n) => !n.startsWith('.'))
    .sort();

describe('FTPS gateway: bad input', () => {
  let s: TestServer;
  let port: number;
  let base: string;
  let root: string;
  let cleanup: () => void;
  const uploaded: any[] = [];

  const signedIn = async (tls = true) => {
    const { ftp } = await RawFtp.connect(port);
    if (tls) await ftp.secure();
    assert.equal((await ftp.login(ADMIN.email, ADMIN.password)).code, 230);
    return ftp;
  };

  before(async () => {
    ({ dir: base, cleanup } = tempDir('filedock-ftpbad-'));
    root = join(base, 'box');
    mkdirSync(join(root, 'docs'), { recursive: true });
    writeFileSync(join(base, 'secret.txt'), 'outside the storage');
    writeFileSync(join(root, 'docs/a.txt'), 'a');
    s = await startTestServer({ SERVICE_FTP_LISTEN: '127.0.0.1:0', SERVICE_LOGIN_MAX_ATTEMPTS: '3', SERVICE_LOGIN_LOCK: '30s' });
    port = ftpPort(s);
    const admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } }))
        .status,
      200,
    );
    assert.equal((await s.api('POST', '/api/admin/users', { token: admin, body: { ...ZED, role: 'user' } })).status, 200);
    s.server.bus.on('file.uploaded', (e) => void uploaded.push(e));
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  test('traversal: .. never climbs above /, absolute paths name storages, backslashes and NUL are 553', async () => {
    const ftp = await signedIn();
    assert.equal((await ftp.cmd('CWD /Box/docs')).code, 250);
    assert.equal((await ftp.cmd('CWD ../../../../..')).code, 250);
    assert.equal((await ftp.cmd('PWD')).text, '"/" is the current directory');
    assert.equal((await ftp.read('RETR ../../secret.txt')).first.code, 550);
    assert.equal((await ftp.read('RETR /Box/../../secret.txt')).first.code, 550);
    assert.equal((await ftp.read('RETR /Box/docs/../../../etc/passwd')).first.code, 550);
    assert.equal((await ftp.read('RETR /etc/passwd')).first.code, 550);
    assert.equal((await ftp.cmd('CWD /Box/docs')).code, 250);
    assert.equal((await ftp.read('RETR ..\\..\\secret.txt')).first.code, 553);
    assert.equal((await ftp.read('RETR a.txt\0.jpg')).first.code, 553);
    const up = await ftp.store('../../../escape.txt', Buffer.from('x'));
    assert.equal(up.last?.code ?? up.first.code, 550, 'lands on the virtual root, which holds only storages');
    assert.equal((await ftp.cmd('MKD ../../../../tmp-escape')).code, 550);
    assert.equal((await ftp.cmd('RNFR a.txt')).code, 350);
    assert.equal((await ftp.cmd('RNTO ../../../../moved.txt')).code, 550);
    assert.deepEqual(visible(base), ['box', 'secret.txt']);
    assert.deepEqual(visible(join(root, 'docs')), ['a.txt']);
    const onFolder = await ftp.store('/Box/docs', Buffer.from('not a folder'));
    assert.equal(onFolder.last?.code ?? onFolder.first.code, 550, 'STOR never replaces a folder');
    assert.deepEqual(visible(join(root, 'docs')), ['a.txt']);
  });

  test('a client killed mid-upload leaves no file and announces nothing; ABOR likewise', async () => {
    const before = uploaded.length;
    const ftp = await signedIn();
    const data = await ftp.data();
    assert.equal((await ftp.cmd('STOR /Box/docs/killed.bin')).code, 150);
    await new Promise<void>((r) => data.write(Buffer.alloc(4 * 1024 * 1024, 1), () => r()));
    await sleep(100);
    ftp.kill(data);
    await sleep(500);
    assert.deepEqual(visible(join(root, 'docs')), ['a.txt']);

    const ab = await signedIn();
    const d2 = await ab.data();
    assert.equal((await ab.cmd('STOR /Box/docs/aborted.bin')).code, 150);
    await new Promise<void>((r) => d2.write(Buffer.alloc(1024 * 1024, 2), () => r()));
    await sleep(50);
    assert.equal((await ab.cmd('ABOR')).code, 426, 'the transfer ends first');
    assert.equal((await ab.reply()).code, 226, 'then ABOR is answered');
    assert.equal((await ab.cmd('NOOP')).code, 200, 'the session goes on');
    await ab.cmd('EPSV');
    assert.equal((await ab.cmd('STOR /Box/docs/never.bin')).code, 150, 'a transfer whose data connection never comes');
    const t0 = Date.now();
    assert.equal((await ab.cmd('ABOR')).code, 426);
    assert.equal((await ab.reply()).code, 226);
    assert.ok(Date.now() - t0 < 1000, 'ABOR does not wait for the data connection');
    await sleep(200);
    assert.deepEqual(visible(join(root, 'docs')), ['a.txt']);
    assert.equal(uploaded.length, before, 'nothing announced');
  });

  test('lftp killed mid-upload (SIGKILL): no file, nothing announced', { skip: needTool('lftp', 'lftp') ?? undefined }, async () => {
    // On a loaded machine lftp may end on its own before it is killed (a slow start, a refused put): that try
    // proves nothing, so the scenario is played again (at most three times) until lftp is killed mid-upload.
    const tries: string[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const before = uploaded.length;
      const fifo = join(base, `fifo-${attempt}`);
      execFileSync('mkfifo', [fifo]);
      const script = `set ftp:ssl-force true; set ftp:ssl-protect-data true; set ssl:verify-certificate no; open -u "${ADMIN.email}","${ADMIN.password}" -p ${port} 127.0.0.1; put ${fifo} -o /Box/docs/lftp-killed.bin`;
      const p = spawn('lftp', ['-c', script], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      p.stderr!.on('data', (d) => (stderr += d));
      const w = createWriteStream(fifo);
      w.on('error', () => {});
      w.write(Buffer.alloc(2 * 1024 * 1024, 3));
      await sleep(1500);
      if (p.exitCode !== null) {
        tries.push(`try ${attempt}: lftp ended by itself with ${p.exitCode} (${stderr.trim()})`);
        w.destroy();
        rmSync(join(root, 'docs', 'lftp-killed.bin'), { force: true });
        continue;
      }
      p.kill('SIGKILL');
      await sleep(800);
      w.destroy();
      assert.deepEqual(visible(join(root, 'docs')), ['a.txt']);
      assert.equal(uploaded.length, before);
      return;
    }
    assert.fail(`lftp was never caught mid-upload: ${tries.join('; ')}`);
  });

  test('brute force: wrong passwords are 530, the connection closes after three, then the account is throttled like the web', async () => {
    const { ftp } = await RawFtp.connect(port);
    await ftp.secure();
    await ftp.cmd(`USER ${ZED.email}`);
    assert.equal((await ftp.cmd('PASS wrong-1')).code, 530);
    await ftp.cmd(`USER ${ZED.email}`);
    assert.equal((await ftp.cmd('PASS wrong-2')).code, 530);
    await ftp.cmd(`USER ${ZED.email}`);
    assert.equal((await ftp.cmd('PASS wrong-3')).code, 530);
    assert.equal((await ftp.reply()).code, 0, 'closed after three failures');
    const { ftp: again } = await RawFtp.connect(port);
    await again.secure();
    const right = await again.login(ZED.email, ZED.password);
    assert.equal(right.code, 530);
    assert.match(right.text, /Too many/);
    const web = await s.api('POST', '/api/auth/login', { body: { email: ZED.email, password: ZED.password } });
    assert.equal(web.status, 429, 'the same throttle as the web sign-in');
    again.kill();
  });

  test('at most 16 connections per address wait unsigned; signed-in ones do not count', async () => {
    const signed = await signedIn();
    const waiting = await Promise.all(Array.from({ length: 16 }, () => RawFtp.connect(port)));
    assert.ok(waiting.every((w) => w.greeting.code === 220));
    const refused = await RawFtp.connect(port);
    assert.equal(refused.greeting.code, 421);
    waiting[0].ftp.kill();
    await sleep(100);
    const next = await RawFtp.connect(port);
    assert.equal(next.greeting.code, 220, 'a closed one frees its place');
    assert.equal((await next.ftp.login(ADMIN.email, ADMIN.password)).code, 230);
    const last = await RawFtp.connect(port);
    assert.equal(last.greeting.code, 220, 'and so does signing in');
    assert.equal((await signed.cmd('NOOP')).code, 200);
    for (const c of [...waiting, next, last, refused]) c.ftp.kill();
    await sleep(100);
  });

  test('no active mode, no APPE, no resumed STOR, commands need a sign-in, an overlong line closes the connection', async () => {
    const { ftp: anon } = await RawFtp.connect(port);
    assert.equal((await anon.cmd('LIST')).code, 530);
    assert.equal((await anon.cmd('FEAT')).code, 211);
    const key = await s.api('POST', '/api/auth/keys', { token: await s.login(), body: { name: 'k', verbs: ['files:read', 'files:write'] } });
    assert.equal((await anon.login('x', key.body.token)).code, 230, 'an API key signs in as the password');
    assert.equal((await anon.cmd('PORT 127,0,0,1,4,1')).code, 502);
    assert.equal((await anon.cmd('EPRT |1|127.0.0.1|1025|')).code, 502);
    assert.equal((await anon.cmd('APPE /Box/docs/a.txt')).code, 502);
    assert.equal((await anon.cmd('REST 1')).code, 350);
    assert.equal((await anon.cmd('STOR /Box/docs/a.txt')).code, 550);
    assert.equal((await anon.cmd('SITE CHMOD 777 a')).code, 502);
    assert.equal((await anon.cmd('RETR /Box/docs/a.txt')).code, 425, 'no passive channel');
    const long = await anon.cmd('NOOP ' + 'x'.repeat(10_000));
    assert.equal(long.code, 500);
    assert.equal((await anon.reply()).code, 0);
  });
});

const outside = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

describe('FTPS gateway from a non-loopback address', { skip: outside ? undefined : 'no non-loopback IPv4 address on this machine' }, () => {
  let s: TestServer;
  let port: number;
  let dir: string;
  let cleanup: () => void;
  const first = 40000 + Math.floor(Math.random() * 20000);

  before(async () => {
    s = await startTestServer({
      SERVICE_FTP_LISTEN: '0.0.0.0:0',
      SERVICE_FTP_IDLE_TIMEOUT: '1s',
      SERVICE_FTP_PASSIVE_PORTS: `${first}-${first + 19}`,
      SERVICE_FTP_PASV_ADDRESS: '203.0.113.7',
    });
    port = ftpPort(s);
    ({ dir, cleanup } = tempDir('filedock-ftpnat-'));
    assert.equal(
      (
        await s.api('POST', '/api/admin/storages', {
          token: await s.login(),
          body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: dir } },
        })
      ).status,
      200,
    );
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  test('TLS before USER, PROT P before data, passive ports from the range, the data port only from the control address, idle connections closed', async () => {
    const { ftp } = await RawFtp.connect(port, outside!);
    assert.equal((await ftp.cmd(`USER ${ADMIN.email}`)).code, 530);
    assert.match((await ftp.cmd(`PASS ${ADMIN.password}`)).text, /TLS required/);
    await ftp.secure();
    assert.equal((await ftp.login(ADMIN.email, ADMIN.password)).code, 230);
    assert.equal((await ftp.cmd('PROT C')).code, 200);
    assert.equal((await ftp.cmd('LIST')).code, 521);
    assert.equal((await ftp.cmd('PROT P')).code, 200);
    const pasv = await ftp.cmd('PASV');
    assert.match(pasv.text, /\(203,0,113,7,\d+,\d+\)/, 'the NAT address is announced');
    const r = await ftp.cmd('EPSV');
    const dataPort = Number(/\|\|\|(\d+)\|/.exec(r.text)![1]);
    assert.ok(dataPort >= first && dataPort <= first + 19, `${dataPort} in the configured range`);
    const thief = connect({ port: dataPort, host: outside!, localAddress: '127.0.0.1' });
    const stolen = await new Promise((resolve) => {
      thief.on('error', () => resolve('refused'));
      thief.on('close', () => resolve('closed'));
      thief.on('data', () => resolve('data'));
    });
    assert.notEqual(stolen, 'data');
    const list = await ftp.read('LIST /');
    assert.deepEqual([list.first.code, list.last?.code], [150, 226], 'the real client still gets its listing');
    const data = await ftp.data();
    assert.equal((await ftp.cmd('STOR /Box/slow.bin')).code, 150);
    for (let i = 0; i < 6; i++) {
      data.write(Buffer.alloc(1024));
      await sleep(300);
    }
    data.end();
    assert.equal((await ftp.reply()).code, 226, 'a transfer longer than the idle time is not cut');
    assert.equal(readdirSync(dir).length, 1);
    await sleep(1500);
    assert.equal((await ftp.reply()).code, 421, 'idle: closed');
  });
});
