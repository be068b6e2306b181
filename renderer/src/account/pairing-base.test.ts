import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopback, pairingBase } from './pairing-base';

const here = 'http://127.0.0.1:5212';

test("the tray's LAN address is used; the page origin without one", () => {
  assert.equal(pairingBase('http://192.168.1.20:5212', here), 'http://192.168.1.20:5212');
  assert.equal(pairingBase('http://10.0.0.7:5212/', here), 'http://10.0.0.7:5212');
  assert.equal(pairingBase('http://172.20.1.2:8080/x?y', here), 'http://172.20.1.2:8080');
  assert.equal(pairingBase('http://desktop.local:5212', here), 'http://desktop.local:5212');
  assert.equal(pairingBase('http://[fd12::5]:5212', here), 'http://[fd12::5]:5212');
  assert.equal(pairingBase(null, here), here);
  assert.equal(pairingBase('', 'http://192.168.1.20:5212'), 'http://192.168.1.20:5212');
});

test('a base that could send the key to a stranger is ignored', () => {
  for (const bad of [
    'https://evil.example.com',
    'http://8.8.8.8:5212',
    'javascript:alert(1)',
    'ftp://192.168.1.2',
    'not a url',
    'http://172.32.0.1',
    'http://[2001:db8::1]',
  ])
    assert.equal(pairingBase(bad, here), here, bad);
  assert.equal(pairingBase('https://files.example.com/account', 'https://files.example.com'), 'https://files.example.com', "the page's own host is fine");
});

test('loopback addresses are told apart', () => {
  for (const b of ['http://127.0.0.1:5212', 'http://localhost:5212', 'http://[::1]:5212']) assert.equal(isLoopback(b), true, b);
  for (const b of ['http://192.168.1.20:5212', 'https://files.example.com']) assert.equal(isLoopback(b), false, b);
});
