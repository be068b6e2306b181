import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Ctx } from './context';
import { relyingParty } from './relying-party';

const ctx = (host: string, protocol = 'http') => ({ get: (h: string) => (h.toLowerCase() === 'host' ? host : ''), protocol }) as unknown as Ctx;

test('the request host decides the RP id and origin; the public URL only for its own host', () => {
  assert.deepEqual(relyingParty(ctx('localhost:5212'), ''), { id: 'localhost', origin: 'http://localhost:5212' });
  assert.deepEqual(relyingParty(ctx('192.168.1.20:5212'), 'https://files.example.test'), { id: '192.168.1.20', origin: 'http://192.168.1.20:5212' });
  // A tunnel ends TLS before us: the browser's origin is the public URL's, not this socket's http.
  assert.deepEqual(relyingParty(ctx('Files.Example.test'), 'https://files.example.test/'), { id: 'files.example.test', origin: 'https://files.example.test' });
  assert.deepEqual(relyingParty(ctx('files.example.test:8443'), 'https://files.example.test:8443'), {
    id: 'files.example.test',
    origin: 'https://files.example.test:8443',
  });
  assert.deepEqual(relyingParty(ctx('[::1]:5212'), ''), { id: '[::1]', origin: 'http://[::1]:5212' });
  assert.equal(relyingParty(ctx(''), ''), null);
});
