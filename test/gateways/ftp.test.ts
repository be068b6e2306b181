// Over 60 s in CI (test-timings.json; issue 37): rclone copies and checks a 1,000-file tree both ways over FTPS; lftp runs once per command.
/**
 * The FTPS gateway with real clients: lftp over explicit TLS (AUTH TLS,
 * PROT P, self-signed certificate) for the everyday commands, rclone's ftp
 * remote for a 1,000-file tree both ways with `rclone check`, and a raw
 * client for exact replies: ranges with REST, refusals in FTP's words (550)
 * for a viewer, a read-only storage, a read-only key and a confined key,
 * rename onto a taken name, storage rename and uid as the first segment.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { RawFtp } from '../helpers/ftp-client';

const run = promisify(execFile);
const VIEWER = { email: 'vic@example.test', username: 'vic', password: 'vic-password-1' };
const skip = needTool('lftp', 'lftp') ?? needTool('rclone', 'rclone');

describe('FTPS gateway with real clients', { skip: skip ?? undefined }, () => {
  let s: TestServer;
  let port: number;
  let root: string;
  let roRoot: string;
  let cleanup: () => void;
  let admin: string;

  const lftp = async (cmds: string, user = ADMIN.email, pass = ADMIN.password) => {
    const script = `set ftp:ssl-force true; set ftp:ssl-protect-data true; set ssl:verify-certificate no; set net:max-retries 1; set cmd:fail-exit true; open -u "${user}","${pass}" -p ${port} 127.0.0.1; ${cmds}`;
    return run('timeout', ['60', 'lftp', '-c', script], { maxBuffer: 64 * 1024 * 1024 });
  };
  const rcloneArgs = async (user = ADMIN.email, pass = ADMIN.password) => [
    '--ftp-host',
    '127.0.0.1',
    '--ftp-port',
    String(port),
    '--ftp-user',
    user,
    '--ftp-pass',
    (await run('rclone', ['obscure', pass])).stdout.trim(),
    '--ftp-explicit-tls',
    '--ftp-no-check-certificate',
    '--config',
    '/dev/null',
    '--retries',
    '1',
    '--low-level-retries',
    '1',
  ];
  const signedIn = async (user = ADMIN.email, pass = ADMIN.password) => {
    const { ftp } = await RawFtp.connect(port);
    await ftp.secure();
    assert.equal((await ftp.login(user, pass)).code, 230);
    return ftp;
  };

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-ftp-'));
    roRoot = join(root, 'ro');
    mkdirSync(join(root, 'box/docs'), { recursive: true });
    mkdirSync(roRoot);
    writeFileSync(join(root, 'box/docs/hello.txt'), 'hello world');
    writeFileSync(join(roRoot, 'kept.txt'), 'kept');
    s = await startTestServer({ SERVICE_FTP_LISTEN: '127.0.0.1:0' });
    const ftp = s.server.services.gateways.registry.status().gateways.find((g) => g.protocol === 'ftp')!;
    assert.equal(ftp.enabled, true);
    port = Number(ftp.listen!.split(':').pop());
    admin = await s.login();
    assert.equal(
      (
        await s.api('POST', '/api/admin/storages', {
          token: admin,
          body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: join(root, 'box') } },
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await s.api('POST', '/api/admin/storages', {
          token: admin,
          body: { rbac_enabled: false, name: 'Ro', driver: 'local', read_only: true, config: { path: roRoot } },
        })
      ).status,
      200,
    );
    assert.equal((await s.api('POST', '/api/admin/users', { token: admin, body: { ...VIEWER, role: 'viewer' } })).status, 200);
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  test('lftp over explicit TLS: list, read, upload through the gate, mkdir, rename, delete, rmdir', async () => {
    const events: any[] = [];
    s.server.bus.on('file.uploaded', (e) => void events.push(e));
    const big = randomBytes(3 * 1024 * 1024 + 17);
    const src = join(root, 'big.bin');
    writeFileSync(src, big);
    const out = await lftp(
      `cls -1 /; cd Box/docs; cat hello.txt; put ${src} -o big.bin; mkdir sub; mv big.bin sub/moved.bin; get sub/moved.bin -o ${join(root, 'back.bin')}; cls -1 sub`,
    );
    assert.equal(out.stdout, '/Box/\n/Ro/\nhello world' + 'sub/moved.bin\n');
    assert.ok(readFileSync(join(root, 'back.bin')).equals(big), 'byte-exact round trip');
    assert.ok(readFileSync(join(root, 'box/docs/sub/moved.bin')).equals(big));
    assert.equal(events.at(-1)?.meta.origin, 'ftp');
    await lftp('cd Box/docs; rm sub/moved.bin; rmdir sub');
    assert.equal(existsSync(join(root, 'box/docs/sub')), false);
    const audit = await s.api('GET', '/api/admin/audit?action=auth.login', { token: admin });
    assert.ok(
      audit.body.events.some((e: any) => e.meta.kind === 'ftp'),
      'sign-in audited as ftp',
    );
  });

  test('lftp: an empty folder lists and an empty file downloads (the TLS data handshake completes before the data ends)', async () => {
    mkdirSync(join(root, 'box/empty'));
    writeFileSync(join(root, 'box/zero.txt'), '');
    const out = await lftp(
      `cls -1 /Box/empty; get /Box/zero.txt -o ${join(root, 'zero-back.txt')}; mirror -R ${join(root, 'box/empty')} /Box/empty-copy; echo done`,
    );
    assert.equal(out.stdout, 'done\n');
    assert.equal(readFileSync(join(root, 'zero-back.txt'), 'utf8'), '');
    assert.ok(existsSync(join(root, 'box/empty-copy')));
  });

  test('rclone ftp: a 1,000-file tree up and down, rclone check both ways', async () => {
    const { dir: local, cleanup: done } = tempDir('filedock-ftp-tree-');
    try {
      for (let d = 0; d < 10; d++) {
        mkdirSync(join(local, 'up', `d${d}`), { recursive: true });
        for (let f = 0; f < 100; f++) writeFileSync(join(local, 'up', `d${d}`, `f${f}.txt`), `file ${d}/${f} ${'x'.repeat(f * 7)}`);
      }
      const args = await rcloneArgs();
      await run('timeout', ['240', 'rclone', 'copy', join(local, 'up'), ':ftp:Box/tree', ...args]);
      await run('timeout', ['120', 'rclone', 'check', join(local, 'up'), ':ftp:Box/tree', ...args]);
      assert.equal(readdirSync(join(root, 'box/tree/d7')).length, 100);
      await run('timeout', ['240', 'rclone', 'copy', ':ftp:Box/tree', join(local, 'down'), ...args]);
      await run('timeout', ['120', 'rclone', 'check', ':ftp:Box/tree', join(local, 'down'), ...args]);
      assert.equal(readFileSync(join(local, 'down/d3/f42.txt'), 'utf8'), `file 3/42 ${'x'.repeat(294)}`);
    } finally {
      done();
    }
  });

  test('RETR with REST reads from the offset; MLSD, SIZE and MDTM come from the catalogue', async () => {
    const ftp = await signedIn();
    assert.equal((await ftp.cmd('CWD /Box/docs')).code, 250);
    assert.equal((await ftp.cmd('PWD')).text, '"/Box/docs" is the current directory');
    assert.equal((await ftp.cmd('REST 6')).code, 350);
    const r = await ftp.read('RETR hello.txt');
    assert.deepEqual([r.first.code, r.last?.code, r.bytes.toString()], [150, 226, 'world']);
    assert.deepEqual(await ftp.cmd('SIZE hello.txt'), { code: 213, text: '11' });
    assert.match((await ftp.cmd('MDTM hello.txt')).text, /^\d{14}$/);
    const mlsd = await ftp.read('MLSD');
    assert.match(mlsd.bytes.toString(), /^type=file;size=11;perm=radfw;modify=\d{14}; hello.txt\r\n$/m);
    assert.equal((await ftp.cmd('SIZE /Box')).code, 550);
    await ftp.cmd('QUIT');
  });

  test('refusals are 550: viewer, read-only storage, read-only key, confined key; nothing written', async () => {
    const viewer = await signedIn(VIEWER.username, VIEWER.password);
    assert.equal((await viewer.read('RETR /Box/docs/hello.txt')).bytes.toString(), 'hello world', 'a viewer reads');
    assert.equal((await viewer.store('/Box/docs/v.txt', Buffer.from('v'))).last?.code ?? 550, 550);
    assert.equal((await viewer.cmd('MKD /Box/vdir')).code, 550);
    assert.equal((await viewer.cmd('DELE /Box/docs/hello.txt')).code, 550);
    const a = await signedIn();
    const ro = await a.store('/Ro/new.txt', Buffer.from('n'));
    assert.equal(ro.last?.code ?? ro.first.code, 550);
    assert.equal((await a.cmd('DELE /Ro/kept.txt')).code, 550);
    const readKey = await s.api('POST', '/api/auth/keys', { token: admin, body: { name: 'ro', verbs: ['files:read'] } });
    const k = await signedIn('anyone', readKey.body.token);
    assert.equal((await k.read('RETR /Box/docs/hello.txt')).bytes.toString(), 'hello world');
    const kw = await k.store('/Box/docs/k.txt', Buffer.from('k'));
    assert.equal(kw.last?.code ?? kw.first.code, 550);
    const confined = await s.api('POST', '/api/auth/keys', { token: admin, body: { name: 'c', verbs: ['files:read', 'files:write'], root: '/Box/docs' } });
    const c = await signedIn('anyone', confined.body.token);
    assert.deepEqual((await c.store('/Box/docs/c.txt', Buffer.from('c'))).last?.code, 226, 'inside its root');
    assert.equal((await c.cmd('MKD /Box/outside')).code, 550);
    assert.equal((await c.cmd('CWD /Box/docs')).code, 250);
    assert.equal((await c.cmd('CWD ../..')).code, 250);
    assert.equal((await c.read('RETR Ro/kept.txt')).first.code, 550);
    assert.deepEqual(readdirSync(join(root, 'box/docs')).sort(), ['c.txt', 'hello.txt']);
    assert.deepEqual(readdirSync(roRoot), ['kept.txt']);
  });

  test('the admin sees the listener and each signed-in session; a taken port is reported, the server still starts', async () => {
    const ftp = await signedIn();
    const r = await s.api('GET', '/api/admin/gateways', { token: admin });
    const g = r.body.gateways.find((x: any) => x.protocol === 'ftp');
    assert.deepEqual([g.enabled, g.listen, g.url, g.error], [true, `127.0.0.1:${port}`, `ftp://127.0.0.1:${port}`, null]);
    assert.ok(r.body.sessions.some((x: any) => x.protocol === 'ftp' && x.user === ADMIN.email && x.ip === '127.0.0.1'));
    await ftp.cmd('QUIT');
    const other = await startTestServer({ SERVICE_FTP_LISTEN: `127.0.0.1:${port}` });
    try {
      const o = await other.api('GET', '/api/admin/gateways', { token: await other.login() });
      const og = o.body.gateways.find((x: any) => x.protocol === 'ftp');
      assert.deepEqual([og.enabled, og.listen], [true, null]);
      assert.match(og.error, /EADDRINUSE/);
    } finally {
      await other.close();
    }
  });

  test('RNTO onto an existing name is 550 and changes nothing; storage rename and uid as the first segment', async () => {
    const ftp = await signedIn();
    assert.equal((await ftp.store('/Box/one.txt', Buffer.from('one'))).last?.code, 226);
    assert.equal((await ftp.store('/Box/two.txt', Buffer.from('two'))).last?.code, 226);
    assert.equal((await ftp.cmd('RNFR /Box/one.txt')).code, 350);
    assert.equal((await ftp.cmd('RNTO /Box/two.txt')).code, 550);
    assert.equal(readFileSync(join(root, 'box/two.txt'), 'utf8'), 'two');
    assert.equal(readFileSync(join(root, 'box/one.txt'), 'utf8'), 'one');
    assert.equal((await ftp.cmd('RNTO /Box/three.txt')).code, 503, 'RNTO needs its own RNFR');
    const list = (await s.api('GET', '/api/admin/storages', { token: admin })).body.storages;
    const box = list.find((x: any) => x.name === 'Box');
    assert.equal((await s.api('PATCH', `/api/admin/storages/${box.id}`, { token: admin, body: { name: 'Crate' } })).status, 200);
    assert.equal((await ftp.read('RETR /Crate/one.txt')).bytes.toString(), 'one');
    assert.equal((await ftp.read('RETR /Box/one.txt')).first.code, 550);
    assert.equal((await ftp.read(`RETR /${box.uid}/two.txt`)).bytes.toString(), 'two');
    assert.equal((await ftp.cmd(`CWD /${box.uid}/docs`)).code, 250);
    assert.equal((await s.api('PATCH', `/api/admin/storages/${box.id}`, { token: admin, body: { name: 'Box' } })).status, 200);
  });
});
