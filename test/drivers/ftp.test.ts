/**
 * The ftp driver against a real vsftpd on loopback: the shared conformance
 * suite over explicit FTPS with a pinned self-signed certificate, then what
 * only a network driver has to get right (credentials, outages and recovery,
 * implicit TLS, certificate trust, a server dying mid-transfer, names the
 * server forbids, a 1 GiB upload in flat memory, the session pool).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StorageDriver } from '../../server/storage/types';
import { ftpDriver } from '../../server/storage/drivers/ftp';
import { parseListTime } from '../../server/storage/drivers/ftp/list-time';
import { needTool } from '../helpers/tools';
import { startVsftpd, type Vsftpd } from '../helpers/vsftpd';
import { driverConformance } from './conformance';
import { expectCode, names, remoteDriverCases, remoteTlsCases, text, type RemoteTarget } from './remote-cases';

const skip = needTool('vsftpd', 'vsftpd') ?? needTool('openssl', 'openssl') ?? undefined;

const driverFor = (s: Vsftpd, extra: Record<string, unknown> = {}): Promise<StorageDriver> | StorageDriver =>
  ftpDriver.create(
    {
      host: s.host,
      port: s.port,
      user: s.user,
      password: s.pass,
      secure: s.tls,
      tls_fingerprint: s.fingerprint,
      root: '/pub/store',
      timeout_s: 5,
      ...extra,
    },
    { stateDir: '/nonexistent', uid: 'test' },
  );

/** The shared network-driver cases on the server `server()` returns. */
const target = (server: () => Vsftpd): RemoteTarget => ({
  server,
  driver: (extra) => driverFor(server(), extra),
  root: (name) => `/pub/${name}`,
  onDisk: (path) => join(server().rootDir, 'pub', path),
  silentDriver: (port) => ftpDriver.create({ host: '127.0.0.1', port, secure: 'off', root: '/x', timeout_s: 1 }, { stateDir: '/nonexistent', uid: 'test' }),
  wrongPassword: /login refused: 530/,
});

if (!skip) {
  driverConformance('ftp (vsftpd, explicit FTPS, pinned certificate)', async () => {
    const server = await startVsftpd({ tls: 'explicit' });
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

describe('ftp driver', { skip }, () => {
  let server: Vsftpd;
  before(async () => {
    server = await startVsftpd({ denyFile: '{*.exe}' });
  });
  after(async () => {
    await server?.teardown();
  });

  test('descriptor marks the root field, the secret and the aliases', () => {
    const fields = Object.fromEntries(ftpDriver.descriptor.fields.map((f) => [f.key, f]));
    assert.equal(fields.root.root, true);
    assert.equal(fields.password.secret, true);
    assert.deepEqual(fields.user.aliases, ['username']);
    assert.deepEqual(fields.secure.options, ['explicit', 'implicit', 'off']);
    assert.equal(ftpDriver.descriptor.fields.filter((f) => f.root).length, 1);
  });

  test('validate refuses the server root, bad hosts, ports, modes and pins, listing every problem', () => {
    const problems = ftpDriver.validate!({ host: 'a b', port: 70000, secure: 'sometimes', root: '//', tls_fingerprint: 'xyz' });
    assert.deepEqual(problems.map((p) => p.field).sort(), ['host', 'port', 'root', 'secure', 'tls_fingerprint']);
    assert.deepEqual(ftpDriver.validate!({ host: 'nas.local', username: 'bob', secure: false, base_path: 'files' }), []);
    assert.deepEqual(
      ftpDriver.validate!({ host: '10.0.0.2', secure: 'implicit', root: 'x/./y' }).map((p) => p.field),
      ['root'],
    );
  });

  test('LIST dates: recent ones carry minutes, older ones a year; all UTC', () => {
    const now = Date.UTC(2026, 10, 21, 12);
    assert.equal(parseListTime('Nov 21 09:43', now), Date.UTC(2026, 10, 21, 9, 43));
    assert.equal(parseListTime('Dec 30 23:59', now), Date.UTC(2025, 11, 30, 23, 59));
    assert.equal(parseListTime('Mar  3  2024', now), Date.UTC(2024, 2, 3));
    assert.equal(parseListTime('garbage', now), 0);
  });

  test('plain FTP: root created on first use, relative roots start at the login folder', async () => {
    const d = await driverFor(server, { root: 'pub/relative/root' });
    await d.write('x.txt', text('x'), { size: 1 });
    assert.equal(readFileSync(join(server.rootDir, 'pub/relative/root/x.txt'), 'utf8'), 'x');
    await d.close();
  });

  test('a name the server forbids is refused and leaves nothing behind', async () => {
    const d = await driverFor(server, { root: '/pub/deny' });
    await expectCode(d.write('tool.exe', text('MZ'), { size: 2 }), 'permission_denied');
    assert.deepEqual(await names(d, ''), []);
    assert.deepEqual(readdirSync(join(server.rootDir, 'pub/deny')), [], 'the temp upload was removed');
    await d.close();
  });

  test('parallel calls share at most two sessions and all succeed', async () => {
    const d = await driverFor(server, { root: '/pub/pool' });
    await Promise.all(Array.from({ length: 6 }, (_, i) => d.write(`f${i}.txt`, text(`v${i}`), { size: 2 })));
    const reads = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const chunks: Buffer[] = [];
        for await (const c of await d.read(`f${i}.txt`)) chunks.push(c as Buffer);
        return Buffer.concat(chunks).toString();
      }),
    );
    assert.deepEqual(reads, ['v0', 'v1', 'v2', 'v3', 'v4', 'v5']);
    assert.equal((await names(d, '')).length, 6);
    await d.close();
  });

  remoteDriverCases(target(() => server));
});

for (const mode of ['explicit', 'implicit'] as const) {
  describe(`ftp driver over ${mode} TLS`, { skip }, () => {
    let server: Vsftpd;
    before(async () => {
      server = await startVsftpd({ tls: mode });
    });
    after(async () => {
      await server?.teardown();
    });

    remoteTlsCases(target(() => server));

    if (mode === 'explicit') {
      test('plain FTP against a server that requires TLS is refused with its reason', async () => {
        const d = await driverFor(server, { secure: 'off', tls_fingerprint: undefined });
        await expectCode(d.stat(''), 'storage_unreachable', /530|encryption|SSL|TLS/i);
        await d.close();
      });
    }
  });
}
