import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { reachableUrls } from './lan-addresses';

const v4 = (address: string, internal = false) =>
  ({ address, family: 'IPv4', internal, netmask: '255.255.255.0', mac: '00:00:00:00:00:00', cidr: null }) as NetworkInterfaceInfo;
const ifaces = {
  lo: [v4('127.0.0.1', true)],
  docker0: [v4('172.17.0.1')],
  eth0: [v4('203.0.113.7'), { ...v4('fd00::2'), family: 'IPv6' } as NetworkInterfaceInfo],
  wlan0: [v4('192.168.1.20'), v4('169.254.3.3')],
};

test('a wildcard listener offers physical IPv4 addresses, private first; no loopback, link-local, IPv6 or container bridge', () => {
  assert.deepEqual(reachableUrls('0.0.0.0', ifaces, 5212, 'http'), { loopbackOnly: false, urls: ['http://192.168.1.20:5212', 'http://203.0.113.7:5212'] });
  assert.deepEqual(reachableUrls('::', ifaces, 443, 'https').urls[0], 'https://192.168.1.20:443');
});

test('a listener bound to one address offers that one; bound to loopback, none', () => {
  assert.deepEqual(reachableUrls('203.0.113.7', ifaces, 80, 'http').urls, ['http://203.0.113.7:80']);
  assert.deepEqual(reachableUrls('127.0.0.1', ifaces, 80, 'http'), { loopbackOnly: true, urls: [] });
  assert.deepEqual(reachableUrls('localhost', ifaces, 80, 'http'), { loopbackOnly: true, urls: [] });
});
