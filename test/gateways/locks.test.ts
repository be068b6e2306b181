/**
 * App locks on every protocol gateway of one real server (WebDAV on the HTTP
 * listener, S3, SFTP and FTPS on loopback ports), with real protocol clients
 * (fetch, the AWS SDK, ssh2's SFTP client, a raw FTP client over TLS): a
 * locked file is refused in each protocol's own words naming the app and the
 * reason, reads go on, and the same verbs work once the lock is cleared.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { p, sshConnect } from '../helpers/sftp-clients';
import { RawFtp } from '../helpers/ftp-client';
import { DEFAULT_TENANT } from '../../server/db';

const { STATUS_CODE: S } = ssh2.utils.sftp;
const sign = { plugin: 'sign', label: 'Fill and sign', reason: 'signing', reason_text: 'Out for signature' };
const SENTENCE = /locked by Fill and sign: Out for signature/;

describe('app locks on the protocol gateways', () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  let sid: number;
  let s3: S3Client;
  let sftpPort: number;
  let ftpPort: number;
  const dav = (path: string, method: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${s.url}/dav${path}`, {
      method,
      body,
      headers: { authorization: 'Basic ' + Buffer.from(`${ADMIN.email}:${ADMIN.password}`).toString('base64'), ...headers },
    });
  const lock = () => s.server.services.files.locks.set(sid, 'a.pdf', sign, null);
  const unlock = () => s.server.services.files.locks.clear(sid, 'a.pdf', 'sign');
  const bytes = () => readFileSync(join(root, 'a.pdf'), 'utf8');

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-locks-gw-'));
    mkdirSync(join(root, 'f'));
    writeFileSync(join(root, 'a.pdf'), 'original');
    writeFileSync(join(root, 'other.txt'), 'other');
    s = await startTestServer({ SERVICE_S3_LISTEN: '127.0.0.1:0', SERVICE_SFTP_LISTEN: '127.0.0.1:0', SERVICE_FTP_LISTEN: '127.0.0.1:0' });
    const admin = await s.login();
    assert.equal((await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Box', driver: 'local', config: { path: root } } })).status, 200);
    sid = s.server.services.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Box')!.id;
    assert.equal((await s.api('GET', '/api/files/manager?path=/Box', { token: admin })).status, 200); // catalogued
    const gw = (protocol: string) => s.server.services.gateways.registry.status().gateways.find((g) => g.protocol === protocol)!;
    const key = await s.api('POST', '/api/auth/keys', { token: admin, body: { name: 's3', verbs: ['files:read', 'files:write'] } });
    assert.ok(key.status === 200 || key.status === 201, JSON.stringify(key.body));
    s3 = new S3Client({
      endpoint: gw('s3').url!,
      region: 'us-east-1',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: { accessKeyId: key.body.s3.access_key_id, secretAccessKey: key.body.s3.secret_access_key },
    });
    for (const g of ['s3', 'sftp', 'ftp']) assert.equal(gw(g).error, null, `${g} gateway started`);
    sftpPort = Number(gw('sftp').listen!.split(':').at(-1));
    ftpPort = Number(gw('ftp').listen!.split(':').at(-1));
  });
  after(async () => {
    s3?.destroy();
    await s?.close();
    cleanup?.();
  });

  test('WebDAV: PUT, DELETE, MOVE, COPY onto it, PROPPATCH and LOCK answer 423 naming the app; GET reads', async () => {
    await lock();
    try {
      const proppatch = '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">1</x></D:prop></D:set></D:propertyupdate>';
      const lockinfo = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
      const tries: Array<[string, string, Record<string, string>, string?]> = [
        ['/Box/a.pdf', 'PUT', {}, 'evil'],
        ['/Box/a.pdf', 'DELETE', {}],
        ['/Box/a.pdf', 'MOVE', { Destination: `${s.url}/dav/Box/z.pdf` }],
        ['/Box/other.txt', 'COPY', { Destination: `${s.url}/dav/Box/a.pdf`, Overwrite: 'T' }],
        ['/Box/a.pdf', 'PROPPATCH', { 'content-type': 'application/xml' }, proppatch],
        ['/Box/a.pdf', 'LOCK', { 'content-type': 'application/xml', Timeout: 'Second-60' }, lockinfo],
      ];
      for (const [path, method, headers, body] of tries) {
        const r = await dav(path, method, headers, body);
        assert.equal(r.status, 423, `${method}: ${r.status}`);
        assert.match(await r.text(), SENTENCE, method);
      }
      const get = await dav('/Box/a.pdf', 'GET');
      assert.equal(await get.text(), 'original');
      assert.equal(bytes(), 'original');
    } finally {
      await unlock();
    }
    assert.equal((await dav('/Box/a.pdf', 'PUT', {}, 'dav')).status, 204, 'cleared: the PUT goes through');
    assert.equal(bytes(), 'dav');
  });

  test('S3: PutObject, DeleteObject and CopyObject onto it are AccessDenied naming the app; GetObject and copies from it work', async () => {
    await lock();
    try {
      const denied = async (call: Promise<unknown>, what: string) => {
        const e = await call.then(
          () => null,
          (err) => err,
        );
        assert.ok(e, `${what} was refused`);
        assert.equal(e.name, 'AccessDenied', what);
        assert.equal(e.$metadata.httpStatusCode, 403, what);
        assert.match(e.message, SENTENCE, what);
      };
      await denied(s3.send(new PutObjectCommand({ Bucket: 'Box', Key: 'a.pdf', Body: 'evil' })), 'PutObject');
      await denied(s3.send(new DeleteObjectCommand({ Bucket: 'Box', Key: 'a.pdf' })), 'DeleteObject');
      await denied(s3.send(new CopyObjectCommand({ Bucket: 'Box', Key: 'a.pdf', CopySource: 'Box/other.txt' })), 'CopyObject');
      const got = await s3.send(new GetObjectCommand({ Bucket: 'Box', Key: 'a.pdf' }));
      assert.equal(await got.Body!.transformToString(), bytes());
      await s3.send(new CopyObjectCommand({ Bucket: 'Box', Key: 'copy.pdf', CopySource: 'Box/a.pdf' }));
      assert.equal(readFileSync(join(root, 'copy.pdf'), 'utf8'), bytes());
      assert.equal(s.server.services.files.locks.of(sid, 'copy.pdf'), null, 'a copy carries no lock');
    } finally {
      await unlock();
    }
    await s3.send(new PutObjectCommand({ Bucket: 'Box', Key: 'a.pdf', Body: 's3' }));
    assert.equal(bytes(), 's3');
  });

  test('SFTP: open for writing, rename and remove are PERMISSION_DENIED with the lock’s sentence; reading works', async () => {
    const ssh = await sshConnect(sftpPort, { username: ADMIN.email, password: ADMIN.password });
    try {
      const sftp = await ssh.sftp();
      await lock();
      try {
        const denied = async (x: Promise<unknown>, what: string) => {
          const e = await x.then(
            () => null,
            (err) => err,
          );
          assert.equal(e?.code, S.PERMISSION_DENIED, `${what}: ${e?.code} ${e?.message}`);
          assert.match(e.message, SENTENCE, what);
        };
        await denied(p.open(sftp, '/Box/a.pdf', 'w'), 'open for writing');
        await denied(p.rename(sftp, '/Box/a.pdf', '/Box/z.pdf'), 'rename');
        await denied(p.unlink(sftp, '/Box/a.pdf'), 'remove');
      } finally {
        await unlock();
      }
      assert.equal((await p.readFile(sftp, '/Box/a.pdf')).toString(), bytes());
      await p.writeFile(sftp, '/Box/a.pdf', 'sftp');
      assert.equal(bytes(), 'sftp', 'cleared: written');
    } finally {
      ssh.end();
    }
  });

  test('FTPS: STOR, RNFR and DELE answer 550 naming the app; RETR reads', async () => {
    const { ftp } = await RawFtp.connect(ftpPort);
    await ftp.secure();
    assert.equal((await ftp.login(ADMIN.email, ADMIN.password)).code, 230);
    try {
      await lock();
      try {
        const stor = await ftp.store('/Box/a.pdf', Buffer.from('evil'));
        assert.equal(stor.first.code, 550, stor.first.text);
        assert.match(stor.first.text, SENTENCE);
        for (const line of ['RNFR /Box/a.pdf', 'DELE /Box/a.pdf']) {
          const r = await ftp.cmd(line);
          assert.equal(r.code, 550, `${line}: ${r.text}`);
          assert.match(r.text, SENTENCE);
        }
        const got = await ftp.read('RETR /Box/a.pdf');
        assert.equal(got.bytes.toString(), bytes());
      } finally {
        await unlock();
      }
      const stored = await ftp.store('/Box/a.pdf', Buffer.from('ftp'));
      assert.equal(stored.last?.code, 226);
      assert.equal(bytes(), 'ftp');
      assert.equal((await ftp.cmd('DELE /Box/a.pdf')).code, 250);
      assert.equal(existsSync(join(root, 'a.pdf')), false);
    } finally {
      ftp.kill();
    }
  });
});
