/**
 * The SFTP gateway on a real server with real clients: OpenSSH's `sftp` in
 * batch mode (password through sshpass) and ssh2's client for the protocol
 * rules, refusals in SFTP's words, traversal, a client gone mid-upload, the
 * refused channels and the sign-in throttle.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { p, sftpBatch, sshConnect, tryChannel } from '../helpers/sftp-clients';
import { loadHostKey } from '../../server/gateways/sftp/host-key';

const { OPEN_MODE: F, STATUS_CODE: S } = ssh2.utils.sftp;
const ZED = { email: 'zed@example.test', username: 'zed', password: 'zed-password-1' };
const VIEWER = { email: 'vi@example.test', username: 'vi', password: 'viewer-password-1' };
const skip = needTool('sshpass', 'sshpass') ?? needTool('sftp', 'openssh-client');

describe('SFTP gateway', { skip: skip ?? false }, () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  let admin: string;
  let port: number;
  const events: { type: string; meta: any; path?: string }[] = [];

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-gw-sftp-'));
    mkdirSync(join(root, 'docs/sub'), { recursive: true });
    writeFileSync(join(root, 'docs/a.txt'), 'hello');
    mkdirSync(join(root, 'many'));
    for (let i = 0; i < 300; i++) writeFileSync(join(root, `many/f${String(i).padStart(3, '0')}.txt`), String(i));
    s = await startTestServer({ SERVICE_SFTP_LISTEN: '127.0.0.1:0', SERVICE_LOGIN_MAX_ATTEMPTS: '3', SERVICE_LOGIN_LOCK: '10s' });
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } }))
        .status,
      200,
    );
    await s.api('POST', '/api/admin/users', { token: admin, body: { ...ZED, role: 'user' } });
    await s.api('POST', '/api/admin/users', { token: admin, body: { ...VIEWER, role: 'viewer' } });
    const g = s.server.services.gateways.registry.status().gateways.find((x) => x.protocol === 'sftp')!;
    port = Number(g.listen!.split(':').at(-1));
    for (const type of ['file.uploaded', 'file.updated'] as const)
      s.server.bus.on(type, (e: any) => void events.push({ type, meta: e.meta, path: e.path ?? e.node?.path }));
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  test('OpenSSH sftp in batch mode: ls -l, get and put byte for byte, mkdir, rename, rm, rmdir; uploads go through the gate', async () => {
    const { dir: local, cleanup: done } = tempDir('filedock-sftp-local-');
    const big = randomBytes(3 * 1024 * 1024 + 17);
    writeFileSync(join(local, 'big.bin'), big);
    const r = await sftpBatch(port, ADMIN.email, ADMIN.password, [
      'pwd',
      'ls -l',
      'cd Box/docs',
      'ls -l',
      `get a.txt ${join(local, 'a.txt')}`,
      `put ${join(local, 'big.bin')} big.bin`,
      `get big.bin ${join(local, 'back.bin')}`,
      'mkdir made',
      'rename big.bin made/moved.bin',
      'ls made',
      'rm made/moved.bin',
      'rmdir made',
      'cd ../../..',
      'pwd',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Remote working directory: \/\n/);
    assert.match(r.stdout, /^drwxr-xr-x 1 admin admin +0 \w{3} [ \d]\d \d\d:\d\d Box$/m, 'ls -l shows the storage as a folder');
    assert.match(r.stdout, /^-rw-r--r-- 1 admin admin +5 .* a\.txt$/m);
    assert.match(r.stdout, /moved\.bin/);
    assert.match(r.stdout, /cd \.\.\/\.\.\/\.\.\nsftp> pwd\nRemote working directory: \/\n/, '.. never climbs above /');
    assert.equal(readFileSync(join(local, 'a.txt'), 'utf8'), 'hello');
    assert.ok(readFileSync(join(local, 'back.bin')).equals(big), 'the download is byte for byte the upload');
    assert.deepEqual(readdirSync(join(root, 'docs')).sort(), ['a.txt', 'sub']);
    const up = events.find((e) => e.type === 'file.uploaded' && e.meta?.origin === 'sftp');
    assert.ok(up, 'the upload was announced with origin sftp');
    done();
  });

  test('the host key: ed25519, kept in the data folder (0600), its fingerprint in the admin status; sessions are listed', async () => {
    const ssh = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
    const status = (await s.api('GET', '/api/admin/gateways', { token: admin })).body;
    const g = status.gateways.find((x: any) => x.protocol === 'sftp');
    assert.equal(g.url, `sftp://127.0.0.1:${port}/`);
    assert.equal(g.fingerprint, 'SHA256:' + createHash('sha256').update(ssh.hostKey).digest('base64').replace(/=+$/, ''));
    assert.equal(ssh.hostKey.subarray(4, 15).toString(), 'ssh-ed25519');
    assert.ok(status.sessions.some((x: any) => x.protocol === 'sftp' && x.user === ADMIN.email));
    ssh.end();
    const file = join(s.dataDir, 'state', 'sftp_host_ed25519_key');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(loadHostKey(file).fingerprint, g.fingerprint, 'read again, the same key');
  });

  test('paths: realpath resolves .. inside the tree, NUL and backslashes are refused, the storage uid works as the first segment, a renamed storage at once', async () => {
    const ssh = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
    const sftp = await ssh.sftp();
    assert.equal(await p.realpath(sftp, '.'), '/');
    assert.equal(await p.realpath(sftp, '../../..'), '/');
    assert.equal(await p.realpath(sftp, 'Box/docs/../docs/./sub'), '/Box/docs/sub');
    assert.equal(await p.code(p.stat(sftp, '/../../etc/passwd')), S.NO_SUCH_FILE, 'no storage is called etc');
    assert.equal(await p.code(p.readFile(sftp, '/Box/../../../../etc/passwd')), S.NO_SUCH_FILE);
    assert.equal(await p.code(p.stat(sftp, '/Box/docs\\..\\..\\x')), S.BAD_MESSAGE);
    assert.equal(await p.code(p.stat(sftp, '/Box/docs/a.txt\0.png')), S.BAD_MESSAGE);
    const list = (await s.api('GET', '/api/admin/storages', { token: admin })).body;
    const box = (list.storages ?? list).find((x: any) => x.name === 'Box');
    assert.equal((await p.readFile(sftp, `/${box.uid}/docs/a.txt`)).toString(), 'hello');
    assert.equal((await s.api('PUT', `/api/admin/storages/${box.id}`, { token: admin, body: { name: 'Crate' } })).status, 200);
    try {
      assert.equal(await p.code(p.stat(sftp, '/Box/docs/a.txt')), S.NO_SUCH_FILE, 'the old name is gone at once');
      assert.equal((await p.readFile(sftp, '/Crate/docs/a.txt')).toString(), 'hello');
      assert.deepEqual(
        (await p.readdir(sftp, '/')).map((e) => e.filename),
        ['Crate'],
      );
    } finally {
      await s.api('PUT', `/api/admin/storages/${box.id}`, { token: admin, body: { name: 'Box' } });
      ssh.end();
    }
  });

  test('a 300-entry folder is listed whole, batch after batch from the catalogue', async () => {
    const ssh = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
    const names = (await p.readdir(await ssh.sftp(), '/Box/many')).map((e) => e.filename).sort();
    assert.equal(names.length, 300);
    assert.deepEqual([names[0], names[299]], ['f000.txt', 'f299.txt']);
    ssh.end();
  });

  test('protocol rules: rename onto a taken name fails and keeps both, posix-rename replaces, rmdir only empty, mkdir not twice, exclusive create, append refused, ranges', async () => {
    const ssh = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
    const sftp = await ssh.sftp();
    await p.mkdir(sftp, '/Box/r');
    await p.writeFile(sftp, '/Box/r/one.txt', 'one');
    await p.writeFile(sftp, '/Box/r/two.txt', 'two');
    assert.equal(await p.code(p.rename(sftp, '/Box/r/one.txt', '/Box/r/two.txt')), S.FAILURE);
    assert.deepEqual([readFileSync(join(root, 'r/one.txt'), 'utf8'), readFileSync(join(root, 'r/two.txt'), 'utf8')], ['one', 'two']);
    // ssh2's server cannot advertise extensions; a client that sends posix-rename anyway gets POSIX semantics.
    (sftp as any)._extensions['posix-rename@openssh.com'] = '1';
    await new Promise<void>((res, rej) => sftp.ext_openssh_rename('/Box/r/one.txt', '/Box/r/two.txt', (e) => (e ? rej(e) : res())));
    assert.deepEqual([existsSync(join(root, 'r/one.txt')), readFileSync(join(root, 'r/two.txt'), 'utf8')], [false, 'one']);
    assert.equal(await p.code(p.rmdir(sftp, '/Box/r')), S.FAILURE, 'not empty');
    assert.equal(await p.code(p.mkdir(sftp, '/Box/r')), S.FAILURE, 'exists');
    assert.equal(await p.code(p.unlink(sftp, '/Box/r')), S.FAILURE, 'a folder is not removed as a file');
    assert.equal(await p.code(p.open(sftp, '/Box/r/two.txt', F.WRITE | F.CREAT | F.EXCL)), S.FAILURE);
    assert.equal(await p.code(p.open(sftp, '/Box/r/two.txt', F.WRITE | F.APPEND)), S.OP_UNSUPPORTED);
    assert.equal(await p.code(p.open(sftp, '/Box/r/none.txt', F.WRITE)), S.NO_SUCH_FILE, 'no CREAT, no file');
    assert.equal(await p.code(p.open(sftp, '/Box/r', F.WRITE | F.CREAT | F.TRUNC)), S.FAILURE, 'a folder');
    assert.equal(await p.code(p.symlink(sftp, '/Box/r/two.txt', '/Box/r/link')), S.OP_UNSUPPORTED);
    const h = await p.open(sftp, '/Box/docs/a.txt', 'r');
    assert.equal((await p.read(sftp, h, 3, 1)).toString(), 'ell');
    assert.equal(await p.code(p.read(sftp, h, 3, 99)), 'ok', 'past the end: EOF, read as 0 bytes');
    await p.close(sftp, h);
    await p.unlink(sftp, '/Box/r/two.txt');
    await p.rmdir(sftp, '/Box/r');
    assert.equal(existsSync(join(root, 'r')), false);
    ssh.end();
  });

  test('writes: out-of-order chunks within the window are put back in order; a write behind what was sent is refused and publishes nothing', async () => {
    const ssh = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
    const sftp = await ssh.sftp();
    const a = Buffer.alloc(1000, 'a');
    const b = Buffer.alloc(1000, 'b');
    let h = await p.open(sftp, '/Box/docs/ooo.bin', 'w');
    await Promise.all([p.write(sftp, h, b, 1000), p.write(sftp, h, a, 0)]);
    await p.close(sftp, h);
    assert.ok(readFileSync(join(root, 'docs/ooo.bin')).equals(Buffer.concat([a, b])));
    h = await p.open(sftp, '/Box/docs/back.bin', 'w');
    await p.write(sftp, h, a, 0);
    assert.equal(await p.code(p.write(sftp, h, b, 10)), S.OP_UNSUPPORTED);
    assert.equal(await p.code(p.close(sftp, h)), S.OP_UNSUPPORTED);
    assert.equal(existsSync(join(root, 'docs/back.bin')), false, 'nothing published');
    ssh.end();
  });

  test('memory is bounded: writes ahead of a gap past 8 MiB in one file, or past 32 MiB across the session, are refused and publish nothing', async () => {
    const ssh = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
    const sftp = await ssh.sftp();
    const chunk = Buffer.alloc(256 * 1024, 7);
    /** Writes `mib` MiB starting 1 MiB in (the first MiB never comes); the status codes of the writes. */
    const ahead = async (h: Buffer, mib: number) =>
      Promise.all(Array.from({ length: mib * 4 }, (_, i) => p.code(p.write(sftp, h, chunk, (1 << 20) + i * chunk.length))));
    const one = await p.open(sftp, '/Box/docs/far.bin', 'w');
    assert.ok((await ahead(one, 9)).includes(S.OP_UNSUPPORTED), 'one file: 8 MiB ahead at most');
    assert.equal(await p.code(p.close(sftp, one)), S.OP_UNSUPPORTED);
    const many = await Promise.all(Array.from({ length: 5 }, (_, i) => p.open(sftp, `/Box/docs/held${i}.bin`, 'w')));
    const codes = (await Promise.all(many.map((h) => ahead(h, 7)))).flat();
    assert.ok(codes.includes(S.FAILURE), 'the session: 32 MiB held at most');
    for (const h of many) await p.code(p.close(sftp, h));
    assert.deepEqual(
      readdirSync(join(root, 'docs')).filter((n) => /far|held/.test(n)),
      [],
      'nothing published',
    );
    ssh.end();
  });

  test('a client gone mid-upload: nothing visible, no temp file left, nothing announced', async () => {
    const ssh = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
    const sftp = await ssh.sftp();
    const before = events.length;
    const h = await p.open(sftp, '/Box/docs/gone.bin', 'w');
    for (let i = 0; i < 8; i++) await p.write(sftp, h, randomBytes(32 * 1024), i * 32 * 1024);
    ssh.client.destroy();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(existsSync(join(root, 'docs/gone.bin')), false);
    assert.deepEqual(
      readdirSync(join(root, 'docs')).filter((n) => n.includes('gone')),
      [],
      'no temp file beside it',
    );
    assert.equal(events.slice(before).filter((e) => JSON.stringify(e).includes('gone.bin')).length, 0);
  });

  test('refusals in SFTP words: a viewer, a read-only storage, a read-only key and a key confined to a folder get PERMISSION_DENIED', async () => {
    const viewer = await sshConnect(port, { username: VIEWER.email, password: VIEWER.password });
    let sftp = await viewer.sftp();
    assert.equal((await p.readFile(sftp, '/Box/docs/a.txt')).toString(), 'hello', 'a viewer reads');
    assert.equal(await p.code(p.writeFile(sftp, '/Box/docs/v.txt', 'x')), S.PERMISSION_DENIED);
    assert.equal(await p.code(p.mkdir(sftp, '/Box/docs/v')), S.PERMISSION_DENIED);
    assert.equal(await p.code(p.unlink(sftp, '/Box/docs/a.txt')), S.PERMISSION_DENIED);
    viewer.end();

    const zed = await s.login(ZED.email, ZED.password);
    const ro = (await s.api('POST', '/api/auth/keys', { token: zed, body: { name: 'ro', verbs: ['files:read'] } })).body.token;
    const confined = (await s.api('POST', '/api/auth/keys', { token: zed, body: { name: 'sub', verbs: ['files:read', 'files:write'], root: '/Box/docs/sub' } }))
      .body.token;
    const key = await sshConnect(port, { username: 'anyone', password: ro });
    sftp = await key.sftp();
    assert.equal((await p.readFile(sftp, '/Box/docs/a.txt')).toString(), 'hello');
    assert.equal(await p.code(p.writeFile(sftp, '/Box/docs/k.txt', 'x')), S.PERMISSION_DENIED);
    assert.equal(await p.code(p.rename(sftp, '/Box/docs/a.txt', '/Box/docs/b.txt')), S.PERMISSION_DENIED);
    // Revoked while the session is open: refused within a second.
    const roId = Number(ro.split('_')[1]);
    assert.equal((await s.api('DELETE', `/api/auth/keys/${roId}`, { token: zed })).status, 200);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal(await p.code(p.readFile(sftp, '/Box/docs/a.txt')), S.PERMISSION_DENIED);
    key.end();
    const inSub = await sshConnect(port, { username: 'anyone', password: confined });
    sftp = await inSub.sftp();
    await p.writeFile(sftp, '/Box/docs/sub/in.txt', 'in');
    assert.equal(readFileSync(join(root, 'docs/sub/in.txt'), 'utf8'), 'in');
    assert.deepEqual(
      (await p.readdir(sftp, '/Box/docs')).map((e) => e.filename),
      ['sub'],
      'the way down shows only the next folder',
    );
    assert.equal(await p.code(p.readFile(sftp, '/Box/docs/a.txt')), S.PERMISSION_DENIED);
    assert.equal(await p.code(p.writeFile(sftp, '/Box/docs/out.txt', 'x')), S.PERMISSION_DENIED);
    inSub.end();

    const list = (await s.api('GET', '/api/admin/storages', { token: admin })).body;
    const box = (list.storages ?? list).find((x: any) => x.name === 'Box');
    await s.api('PUT', `/api/admin/storages/${box.id}`, { token: admin, body: { name: 'Box', read_only: true } });
    try {
      const a = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
      sftp = await a.sftp();
      assert.equal(await p.code(p.writeFile(sftp, '/Box/docs/ro.txt', 'x')), S.PERMISSION_DENIED);
      assert.equal(await p.code(p.unlink(sftp, '/Box/docs/a.txt')), S.PERMISSION_DENIED);
      assert.equal(await p.code(p.mkdir(sftp, '/Box/docs/ro')), S.PERMISSION_DENIED);
      a.end();
    } finally {
      await s.api('PUT', `/api/admin/storages/${box.id}`, { token: admin, body: { name: 'Box', read_only: false } });
    }
  });

  test('a long session follows its account: demoted, writes are refused within a second; disabled, the session ends', async () => {
    // Its own account: a password signed in once is remembered (gateway core), which the throttle test must not meet.
    const id = (
      await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'yan@example.test', username: 'yan', password: 'yan-password-1', role: 'user' } })
    ).body.user.id;
    const ssh = await sshConnect(port, { username: 'yan', password: 'yan-password-1' });
    const closed = new Promise<void>((r) => ssh.client.once('close', () => r()));
    const sftp = await ssh.sftp();
    await p.writeFile(sftp, '/Box/docs/yan.txt', 'y');
    assert.equal((await s.api('PATCH', `/api/admin/users/${id}`, { token: admin, body: { role: 'viewer' } })).status, 200);
    try {
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal(await p.code(p.writeFile(sftp, '/Box/docs/yan2.txt', 'y')), S.PERMISSION_DENIED);
      assert.equal((await p.readFile(sftp, '/Box/docs/yan.txt')).toString(), 'y', 'still reads as a viewer');
      assert.equal((await s.api('POST', `/api/admin/users/${id}/disable`, { token: admin })).status, 200);
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal(await p.code(p.stat(sftp, '/Box/docs/yan.txt')), S.PERMISSION_DENIED);
      await closed;
    } finally {
      ssh.end();
    }
  });

  test('only the sftp subsystem: shell, exec, other subsystems and port forwarding both ways are refused', async () => {
    const ssh = await sshConnect(port, { username: ADMIN.email, password: ADMIN.password });
    for (const kind of ['shell', 'exec', 'subsystem', 'forwardOut', 'forwardIn'] as const) {
      assert.notEqual(await tryChannel(ssh.client, kind), 'accepted', kind);
    }
    assert.equal((await p.readdir(await ssh.sftp(), '/')).length, 1, 'the connection still serves SFTP');
    ssh.end();
  });

  test('sign-in: wrong passwords count in the web throttle (then even the right one waits), audited as sftp; an API key token is a password', async () => {
    for (let i = 0; i < 3; i++) {
      await assert.rejects(sshConnect(port, { username: ZED.username, password: `wrong-${i}-password` }), /authentication methods failed/);
    }
    await assert.rejects(sshConnect(port, { username: ZED.username, password: ZED.password }), /authentication methods failed/, 'locked like the web');
    const web = await s.api('POST', '/api/auth/login', { body: { email: ZED.username, password: ZED.password } });
    assert.equal(web.body.error, 'rate_limited', 'the same lock as the web sign-in');
    const audit = await s.api('GET', '/api/admin/audit?action=auth.login', { token: admin });
    assert.ok(audit.body.events.some((e: any) => e.meta.kind === 'sftp'));
    // The lock (10 s: at load 30 three SSH sign-ins outlasted a 2 s window) ends by itself: poll, bounded.
    const end = Date.now() + 60_000;
    for (;;) {
      const ok = await sshConnect(port, { username: ZED.username, password: ZED.password }).catch((e: Error) => e);
      if (!(ok instanceof Error)) {
        ok.end();
        break;
      }
      if (Date.now() > end) throw ok;
      await new Promise((r) => setTimeout(r, 1000));
    }
  });
});
