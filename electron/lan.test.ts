import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { advertise, lanUrl, nfsListener, nfsUrl, pickLanAddress, qrDataUrl, sftpListener, sftpUrl, webdavOnLan, webdavUrl, type MdnsResponder } from './lan';

const v4 = (address: string, internal = false) =>
  ({ address, family: 'IPv4', internal, netmask: '255.255.255.0', mac: '00:00:00:00:00:00', cidr: null }) as NetworkInterfaceInfo;
const v6 = (address: string) =>
  ({ address, family: 'IPv6', internal: false, netmask: 'ffff::', mac: '00:00:00:00:00:00', cidr: null, scopeid: 0 }) as NetworkInterfaceInfo;

test('picks the private address of a physical interface over loopback, link-local, IPv6 and container bridges', () => {
  const ifs = {
    lo: [v4('127.0.0.1', true)],
    docker0: [v4('172.17.0.1')],
    tailscale0: [v4('100.64.0.5')],
    eth1: [v4('169.254.3.4'), v6('fe80::1')],
    wlan0: [v4('192.168.1.23'), v6('fd00::23')],
  };
  assert.equal(pickLanAddress(ifs), '192.168.1.23');
  assert.equal(lanUrl(true, ifs, 5212), 'http://192.168.1.23:5212');
  assert.equal(lanUrl(false, ifs, 5212), null, 'LAN access off shows no LAN address');
  assert.equal(pickLanAddress({ lo: [v4('127.0.0.1', true)] }), null);
  assert.equal(pickLanAddress({ docker0: [v4('172.17.0.1')] }), '172.17.0.1', 'a bridge is better than nothing');
});

test('the QR code is a PNG data URL that encodes the address', async () => {
  const url = await qrDataUrl('http://192.168.1.23:5212');
  assert.match(url, /^data:image\/png;base64,/);
  const png = Buffer.from(url.split(',')[1], 'base64');
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
  assert.notEqual(url, await qrDataUrl('http://192.168.1.24:5212'));
});

test('advertises _http._tcp with the port and withdraws it once on stop', async () => {
  const calls: string[] = [];
  let published: unknown;
  const fake: MdnsResponder = {
    publish: (s) => {
      published = s;
      calls.push('publish');
    },
    unpublishAll: (cb) => {
      calls.push('unpublish');
      cb?.();
    },
    destroy: (cb) => {
      calls.push('destroy');
      cb?.();
    },
  };
  const stop = advertise(fake, { name: 'Filedock on desk', port: 5212, version: '0.1.0' });
  assert.deepEqual(published, { name: 'Filedock on desk', type: 'http', port: 5212, txt: { path: '/', product: 'filedock', version: '0.1.0' } });
  await Promise.all([stop(), stop()]);
  assert.deepEqual(calls, ['publish', 'unpublish', 'destroy']);
});

test('WebDAV: the copied address is the LAN one only when the network may sign in over plain HTTP; _webdav._tcp announced then', () => {
  const lan = 'http://192.168.1.20:5212';
  assert.equal(webdavUrl({}, lan, 5212), 'http://localhost:5212/dav/', 'plain HTTP from the network is refused by default');
  assert.equal(webdavUrl({ SERVICE_WEBDAV_ALLOW_HTTP: '1' }, lan, 5212), 'http://192.168.1.20:5212/dav/');
  assert.equal(webdavUrl({ SERVICE_WEBDAV_ALLOW_HTTP: 'true' }, null, 5212), 'http://localhost:5212/dav/', 'LAN access off');
  assert.equal(webdavUrl({ SERVICE_WEBDAV: '0' }, lan, 5212), null);
  assert.equal(webdavUrl({}, lan, undefined), null);
  assert.equal(webdavOnLan({}), false);
  assert.equal(webdavOnLan({ SERVICE_WEBDAV_ALLOW_HTTP: 'yes' }), true);
  assert.equal(webdavOnLan({ SERVICE_WEBDAV: 'false', SERVICE_WEBDAV_ALLOW_HTTP: '1' }), false);
  const published: unknown[] = [];
  const fake: MdnsResponder = { publish: (s) => void published.push(s), unpublishAll: (cb) => cb?.(), destroy: (cb) => cb?.() };
  advertise(fake, { name: 'Filedock on desk', port: 5212, version: '0.1.0', webdav: true });
  assert.deepEqual(published[1], { name: 'Filedock on desk', type: 'webdav', port: 5212, txt: { path: '/dav/' } });
  published.length = 0;
  advertise(fake, { name: 'Filedock on desk', port: 5212, version: '0.1.0' });
  assert.equal(published.length, 1, 'only _http._tcp without webdav');
});

test('SFTP: the copied address and _sftp-ssh._tcp follow SERVICE_SFTP_LISTEN (announced only beyond loopback)', () => {
  const lan = 'http://192.168.1.20:5212';
  assert.equal(sftpListener({}), null, 'off by default');
  assert.equal(sftpListener({ SERVICE_SFTP_LISTEN: 'nonsense' }), null);
  assert.deepEqual(sftpListener({ SERVICE_SFTP_LISTEN: ':2022' }), { port: 2022, onLan: true });
  assert.deepEqual(sftpListener({ SERVICE_SFTP_LISTEN: '0.0.0.0:2022' }), { port: 2022, onLan: true });
  assert.deepEqual(sftpListener({ SERVICE_SFTP_LISTEN: '127.0.0.1:2022' }), { port: 2022, onLan: false });
  assert.deepEqual(sftpListener({ SERVICE_SFTP_LISTEN: '[::1]:2022' }), { port: 2022, onLan: false });
  assert.equal(sftpUrl({ SERVICE_SFTP_LISTEN: ':2022' }, lan), 'sftp://192.168.1.20:2022/');
  assert.equal(sftpUrl({ SERVICE_SFTP_LISTEN: ':2022' }, null), 'sftp://localhost:2022/', 'LAN access off');
  assert.equal(sftpUrl({ SERVICE_SFTP_LISTEN: '127.0.0.1:2022' }, lan), 'sftp://localhost:2022/', 'loopback only');
  assert.equal(sftpUrl({}, lan), null);
  const published: { type: string; port: number }[] = [];
  const fake: MdnsResponder = { publish: (s) => void published.push(s), unpublishAll: (cb) => cb?.(), destroy: (cb) => cb?.() };
  advertise(fake, { name: 'Filedock on desk', port: 5212, version: '0.1.0', sftpPort: 2022 });
  assert.deepEqual(
    published.map((p) => [p.type, p.port]),
    [
      ['http', 5212],
      ['sftp-ssh', 2022],
    ],
  );
});

test('NFS: the copied address follows SERVICE_NFS_LISTEN (the LAN address only when the gateway listens beyond loopback)', () => {
  const lan = 'http://192.168.1.20:5212';
  assert.equal(nfsUrl({ SERVICE_NFS_LISTEN: ':2049' }, lan), 'nfs://192.168.1.20/?nfsport=2049&mountport=2049&version=3');
  assert.equal(nfsUrl({ SERVICE_NFS_LISTEN: '0.0.0.0:2050' }, null), 'nfs://localhost/?nfsport=2050&mountport=2050&version=3', 'LAN access off');
  assert.equal(nfsUrl({ SERVICE_NFS_LISTEN: '127.0.0.1:2049' }, lan), 'nfs://localhost/?nfsport=2049&mountport=2049&version=3', 'loopback only');
  assert.equal(nfsUrl({ SERVICE_NFS_LISTEN: '' }, lan), null, 'off');
  assert.equal(nfsUrl({}, lan), null);
});

test('NFS: _nfs._tcp follows SERVICE_NFS_LISTEN, announced only beyond loopback', () => {
  assert.equal(nfsListener({}), null, 'off by default');
  assert.deepEqual(nfsListener({ SERVICE_NFS_LISTEN: ':2049' }), { port: 2049, onLan: true });
  assert.deepEqual(nfsListener({ SERVICE_NFS_LISTEN: '127.0.0.1:2049' }), { port: 2049, onLan: false });
  const published: { type: string; port: number }[] = [];
  const fake: MdnsResponder = { publish: (s) => void published.push(s), unpublishAll: (cb) => cb?.(), destroy: (cb) => cb?.() };
  advertise(fake, { name: 'Filedock on desk', port: 5212, version: '0.1.0', nfsPort: 2049 });
  assert.deepEqual(
    published.map((p) => [p.type, p.port]),
    [
      ['http', 5212],
      ['nfs', 2049],
    ],
  );
});
