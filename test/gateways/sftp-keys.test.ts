/**
 * SSH keys registered per account (`/api/auth/ssh-keys`) and public-key
 * sign-in to the SFTP gateway with OpenSSH's `sftp -i` and ssh2's client: a
 * registered key signs in as its account, an unknown or removed key does
 * not, another account's name with my key does not.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import ssh2 from 'ssh2';
import { p, run, sshConnect } from '../helpers/sftp-clients';

const ZED = { email: 'zed@example.test', username: 'zed', password: 'zed-password-1' };
const skip = needTool('ssh-keygen', 'openssh-client');

describe('SSH keys and public-key sign-in', { skip: skip ?? false }, () => {
  let s: TestServer;
  let dir: string;
  let cleanup: () => void;
  let zed: string;
  let port: number;
  const key = (name: string, type = 'ed25519', bits?: number) => {
    const path = join(dir, name);
    execFileSync('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', String(bits)] : []), '-N', '', '-C', `${name}@laptop`, '-f', path]);
    return { path, pub: readFileSync(`${path}.pub`, 'utf8'), priv: readFileSync(path, 'utf8') };
  };

  before(async () => {
    ({ dir, cleanup } = tempDir('filedock-sshkeys-'));
    s = await startTestServer({ SERVICE_SFTP_LISTEN: '127.0.0.1:0' });
    const admin = await s.login();
    await s.api('POST', '/api/admin/users', { token: admin, body: { ...ZED, role: 'user' } });
    zed = await s.login(ZED.email, ZED.password);
    port = Number(
      s.server.services.gateways.registry
        .status()
        .gateways.find((x) => x.protocol === 'sftp')!
        .listen!.split(':')
        .at(-1),
    );
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  test('routes: add (name from the comment, SHA256 fingerprint), list, the same key twice, bad input, remove; a key token cannot use them', async () => {
    const k = key('one');
    const made = await s.api('POST', '/api/auth/ssh-keys', { token: zed, body: { public_key: k.pub } });
    assert.equal(made.status, 201);
    const fp = execFileSync('ssh-keygen', ['-lf', `${k.path}.pub`], { encoding: 'utf8' }).split(' ')[1];
    assert.deepEqual([made.body.key.name, made.body.key.algo, made.body.key.fingerprint, made.body.key.last_used_at], ['one@laptop', 'ssh-ed25519', fp, null]);
    assert.equal((await s.api('POST', '/api/auth/ssh-keys', { token: zed, body: { public_key: k.pub, name: 'again' } })).body.error, 'conflict');
    for (const [public_key, reason] of [
      [k.priv, 'a private key'],
      ['ssh-ed25519 AAAAnope', 'not an OpenSSH'],
      ['hello', 'not an OpenSSH'],
      [`${k.pub}\n${k.pub}`, 'one key'],
    ]) {
      const r = await s.api('POST', '/api/auth/ssh-keys', { token: zed, body: { public_key } });
      assert.equal(r.status, 400, public_key);
      assert.equal(r.body.details.field, 'public_key');
      assert.match(r.body.details.reason, new RegExp(reason));
    }
    const weak = key('weak', 'rsa', 1024);
    assert.match((await s.api('POST', '/api/auth/ssh-keys', { token: zed, body: { public_key: weak.pub } })).body.details.reason, /2048/);
    assert.equal((await s.api('POST', '/api/auth/ssh-keys', { token: zed, body: { public_key: k.pub, extra: 1 } })).status, 400);
    const list = await s.api('GET', '/api/auth/ssh-keys', { token: zed });
    assert.deepEqual(
      list.body.keys.map((x: any) => x.fingerprint),
      [fp],
    );
    const admin = await s.login();
    assert.equal((await s.api('DELETE', `/api/auth/ssh-keys/${made.body.key.id}`, { token: admin })).status, 404, "another person's key");
    assert.equal((await s.api('DELETE', '/api/auth/ssh-keys/abc', { token: zed })).status, 400);
    const token = (await s.api('POST', '/api/auth/keys', { token: zed, body: { name: 'k', verbs: ['files:read', 'files:write'] } })).body.token;
    assert.equal((await s.api('POST', '/api/auth/ssh-keys', { token, body: { public_key: key('two').pub } })).status, 403, 'an API key cannot add a way in');
    assert.equal((await s.api('DELETE', `/api/auth/ssh-keys/${made.body.key.id}`, { token: zed })).status, 200);
    assert.deepEqual((await s.api('GET', '/api/auth/ssh-keys', { token: zed })).body.keys, []);
  });

  test("sign-in: OpenSSH sftp -i and ssh2 with a registered key sign in as the account; unknown, removed and other accounts' keys are refused", async () => {
    const k = key('laptop');
    const made = (await s.api('POST', '/api/auth/ssh-keys', { token: zed, body: { public_key: k.pub, name: 'Laptop' } })).body.key;
    const sftp = (user: string, identity: string) =>
      run(
        'sftp',
        [
          '-b',
          '-',
          '-P',
          String(port),
          '-i',
          identity,
          '-o',
          'IdentitiesOnly=yes',
          '-o',
          'PasswordAuthentication=no',
          '-o',
          'StrictHostKeyChecking=no',
          '-o',
          'UserKnownHostsFile=/dev/null',
          '-o',
          `User=${user}`,
          '127.0.0.1',
        ],
        { input: 'pwd\nls\n', seconds: 30 },
      );
    const ok = await sftp(ZED.username, k.path);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /Remote working directory: \//);
    const keys = (await s.api('GET', '/api/auth/ssh-keys', { token: zed })).body.keys;
    assert.ok(keys[0].last_used_at, 'the use is recorded');
    const c = await sshConnect(port, { username: ZED.email, privateKey: k.priv });
    const who = s.server.services.gateways.registry.status().sessions.map((x) => x.user);
    assert.ok(who.includes(ZED.email), 'signed in as the account');
    await p.realpath(await c.sftp(), '.');
    c.end();

    const stranger = key('stranger');
    assert.notEqual((await sftp(ZED.username, stranger.path)).code, 0, 'an unknown key');
    assert.notEqual((await sftp(ADMIN.email, k.path)).code, 0, "zed's key does not open the admin's account");
    await assert.rejects(sshConnect(port, { username: ZED.email, privateKey: stranger.priv }), /authentication methods failed/);
    // A client that shows zed's public key but signs with another private key is refused (the signature is checked).
    const real = ssh2.utils.parseKey(k.pub) as ssh2.ParsedKey;
    const forged = Object.create(ssh2.utils.parseKey(stranger.priv) as ssh2.ParsedKey, { getPublicSSH: { value: () => real.getPublicSSH() } });
    await assert.rejects(
      sshConnect(port, { username: ZED.email, authHandler: [{ type: 'publickey', username: ZED.email, key: forged } as never] }),
      /authentication methods failed/,
    );
    await s.api('DELETE', `/api/auth/ssh-keys/${made.id}`, { token: zed });
    assert.notEqual((await sftp(ZED.username, k.path)).code, 0, 'a removed key');
    const audit = await s.api('GET', '/api/admin/audit?action=auth.login', { token: await s.login() });
    assert.ok(audit.body.events.some((e: any) => e.meta.kind === 'sftp' && e.meta.method === 'publickey'));
  });
});
