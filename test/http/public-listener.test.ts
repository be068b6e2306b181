import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server';
import { freePort } from '../helpers/tools';

test('the public listener serves only public routes and ignores sessions', async () => {
  const port = await freePort();
  const s = await startTestServer({ SERVICE_PUBLIC_LISTEN: `127.0.0.1:${port}` });
  try {
    assert.equal(s.server.publicPort, port);
    const token = await s.login();
    const pub = `http://127.0.0.1:${port}`;
    for (const path of ['/api/auth/me', '/api/admin/storages', '/api/capabilities', '/', '/files/x']) {
      const r = await fetch(pub + path, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.status, 404, path);
    }
    const login = await fetch(pub + '/api/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a', password: 'b' }),
    });
    assert.equal(login.status, 404);
    // The main listener still serves everything.
    assert.equal((await fetch(`${s.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  } finally {
    await s.close();
  }
});
