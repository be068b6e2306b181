import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nfsEndpoint, nfsMountCommands } from './nfs-mount';

test('NFS mount commands: Linux, libnfs URL and macOS with one port for MOUNT and NFS', () => {
  assert.deepEqual(nfsMountCommands('192.168.1.5', 2049, '/Media'), [
    { label: 'Linux', value: 'sudo mkdir -p /mnt/Media && sudo mount -t nfs -o vers=3,tcp,port=2049,mountport=2049 192.168.1.5:/Media /mnt/Media' },
    { label: 'Kodi / libnfs', value: 'nfs://192.168.1.5/Media?nfsport=2049&mountport=2049&version=3' },
    { label: 'macOS', value: 'mkdir -p ~/Media && sudo mount -t nfs -o vers=3,tcp,port=2049,mountport=2049 192.168.1.5:/Media ~/Media' },
  ]);
});

test('NFS mount commands: spaces, quotes and IPv6 stay one argument', () => {
  const [linux, url, mac] = nfsMountCommands('fd00::5', '2050', "/Box/Tom's Films");
  assert.equal(
    linux.value,
    `sudo mkdir -p /mnt/Tom-s-Films && sudo mount -t nfs -o vers=3,tcp,port=2050,mountport=2050 '[fd00::5]:/Box/Tom'\\''s Films' /mnt/Tom-s-Films`,
  );
  assert.equal(url.value, "nfs://[fd00::5]/Box/Tom's%20Films?nfsport=2050&mountport=2050&version=3");
  assert.match(mac.value, /^mkdir -p ~\/Tom-s-Films && /);
});

test('NFS endpoint: a wildcard or loopback listener is reached at the page host', () => {
  assert.deepEqual(nfsEndpoint('nfs://0.0.0.0:2049/', 'nas.lan'), { host: 'nas.lan', port: '2049' });
  assert.deepEqual(nfsEndpoint('nfs://127.0.0.1:4049/', 'nas.lan'), { host: 'nas.lan', port: '4049' });
  assert.deepEqual(nfsEndpoint('nfs://192.168.1.5:2049/', 'nas.lan'), { host: '192.168.1.5', port: '2049' });
  assert.equal(nfsEndpoint(null, 'nas.lan'), null);
});
