/**
 * The webdav driver against a real `rclone serve webdav` on loopback: the
 * shared conformance suite, then what only a network driver has to get right
 * (credentials, outages and recovery, TLS trust, a server dying mid-upload,
 * a 1 GiB upload in flat memory).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { StorageDriver } from '../../server/storage/types';
import { webdavDriver } from '../../server/storage/drivers/webdav';
import { needTool } from '../helpers/tools';
import { startRcloneWebdav, type RcloneWebdav } from '../helpers/rclone-webdav';
import { driverConformance } from './conformance';
import { remoteDriverCases, remoteTlsCases, type RemoteTarget } from './remote-cases';

const skip = needTool('rclone', 'rclone') ?? undefined;

const driverFor = (s: RcloneWebdav, extra: Record<string, unknown> = {}): Promise<StorageDriver> | StorageDriver =>
  webdavDriver.create({ url: s.url, root: '/store', username: s.user, password: s.pass, timeout_s: 5, ...extra }, { stateDir: '/nonexistent', uid: 'test' });

/** The shared network-driver cases on the server `server()` returns. */
const target = (server: () => RcloneWebdav): RemoteTarget => ({
  server,
  driver: (extra) => driverFor(server(), extra),
  root: (name) => `/${name}`,
  onDisk: (path) => join(server().dir, path),
  silentDriver: (port) => webdavDriver.create({ url: `http://127.0.0.1:${port}`, root: '/x', timeout_s: 1 }, { stateDir: '/nonexistent', uid: 'test' }),
  wrongPassword: /401/,
});

if (!skip) {
  driverConformance('webdav (rclone serve webdav)', async () => {
    const server = await startRcloneWebdav();
    const driver = await driverFor(server);
    return {
      driver,
      teardown: async () => {
        await driver.close();
        await server.teardown();
      },
    };
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
    assert.deepEqual(
      webdavDriver.validate!({ url: 'http://h', root: 'a/../..' }).map((p) => p.field),
      ['root'],
    );
  });

  test('creates the root folder on first use', async () => {
    const d = await driverFor(server, { root: '/auto/created' });
    assert.equal((await d.stat('')).type, 'dir');
    assert.ok(existsSync(join(server.dir, 'auto/created')));
    await d.close();
  });

  remoteDriverCases(target(() => server));
});

describe('webdav driver over TLS', { skip }, () => {
  let server: RcloneWebdav;
  before(async () => {
    server = await startRcloneWebdav({ tls: true });
  });
  after(async () => {
    await server?.teardown();
  });

  remoteTlsCases(target(() => server));
});
