import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCert } from './cert';
import { factsLine, ftpTime, listLine, listable } from './listing';
import { parsePortRange } from './passive';
import { isLoopback } from './session';

test('ftp certificate: self-signed once into the data dir (key 0600), kept across starts; a configured pair wins', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'filedock-ftpcert-'));
  try {
    const a = await loadCert({ certPath: '', keyPath: '', stateDir: dir });
    assert.equal(statSync(join(dir, 'ftp/tls.key')).mode & 0o777, 0o600);
    const b = await loadCert({ certPath: '', keyPath: '', stateDir: dir });
    assert.equal(b.fingerprint, a.fingerprint, 'made once, then reused');
    assert.equal(new X509Certificate(a.cert).checkIP('127.0.0.1'), '127.0.0.1');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        join(dir, 'k.pem'),
        '-out',
        join(dir, 'c.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=mine',
      ],
      { stdio: 'ignore' },
    );
    const mine = await loadCert({ certPath: join(dir, 'c.pem'), keyPath: join(dir, 'k.pem'), stateDir: dir });
    assert.equal(mine.fingerprint, new X509Certificate(readFileSync(join(dir, 'c.pem'))).fingerprint256);
    await assert.rejects(loadCert({ certPath: join(dir, 'c.pem'), keyPath: '', stateDir: dir }), /SERVICE_FTP_TLS_KEY/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ftp listings: ls -l lines, MLSD facts, UTC times; names with CR or LF are left out', () => {
  const t = Date.UTC(2026, 10, 25, 9, 5, 7);
  assert.equal(ftpTime(t), '20261125090507');
  assert.equal(listLine({ name: 'a b.txt', type: 'file', size: 42, mtime: t }, t), '-rw-r--r-- 1 filedock filedock           42 Nov 25 09:05 a b.txt');
  assert.equal(listLine({ name: 'old', type: 'dir', size: 0, mtime: Date.UTC(2020, 0, 2) }, t), 'drwxr-xr-x 1 filedock filedock            0 Jan  2  2020 old');
  assert.equal(factsLine({ name: 'f', type: 'file', size: 3, mtime: t }), 'type=file;size=3;perm=radfw;modify=20261125090507; f');
  assert.equal(factsLine({ name: 'd', type: 'dir', size: 0, mtime: t }, '/Box/d'), 'type=dir;perm=elcmfd;modify=20261125090507; /Box/d');
  assert.equal(listable('x\r\n226 forged'), false);
  assert.equal(listable('ok name'), true);
});

test('ftp settings and addresses: passive port ranges, loopback clients', () => {
  assert.deepEqual(parsePortRange('50000-50100'), { min: 50000, max: 50100 });
  assert.deepEqual(parsePortRange(' 2121 '), { min: 2121, max: 2121 });
  assert.equal(parsePortRange(''), null);
  for (const bad of ['50100-50000', '0-10', '1-70000', 'a-b', '1,2']) assert.throws(() => parsePortRange(bad), /SERVICE_FTP_PASSIVE_PORTS/, bad);
  for (const ip of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopback(ip), true, ip);
  for (const ip of ['192.0.2.2', '::ffff:10.0.0.1', 'fd00::2', '', undefined]) assert.equal(isLoopback(ip), false, String(ip));
});
