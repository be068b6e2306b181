/** GET /api/admin/status: admin only; event loop, admission, database waits and memory sections. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server';
import { DEFAULT_TENANT } from '../../server/db';

test('the status route reports the load guards to admins only; listings pass admission, capabilities do not', async () => {
  const s = await startTestServer({ SERVICE_ADMISSION_MAX_ACTIVE: '3', SERVICE_ADMISSION_MAX_QUEUE: '50', SERVICE_ADMISSION_MAX_WAIT: '5s' });
  try {
    const admin = await s.login();
    await s.server.auth.users.create(DEFAULT_TENANT, { email: 'u@example.test', password: 'user-password-1', role: 'user' });
    const user = await s.login('u@example.test', 'user-password-1');
    assert.equal((await s.api('GET', '/api/admin/status')).status, 401);
    assert.equal((await s.api('GET', '/api/admin/status', { token: user })).status, 403);

    const before = (await s.api('GET', '/api/admin/status', { token: admin })).body;
    for (let i = 0; i < 3; i++) assert.equal((await s.api('GET', '/api/files/manager?path=/', { token: user })).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await s.api('GET', '/api/capabilities')).status, 200);
    const r = await s.api('GET', '/api/admin/status', { token: admin });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    const { event_loop, admission, db, memory } = r.body;
    for (const k of ['p50_ms', 'p99_ms', 'max_ms', 'window_s']) assert.equal(typeof event_loop[k], 'number', k);
    assert.ok(event_loop.p50_ms <= event_loop.p99_ms && event_loop.p99_ms <= event_loop.max_ms);
    assert.deepEqual(admission.limits, { max_active: 3, max_queued: 50, max_wait_ms: 5000 });
    assert.equal(admission.admitted - before.admission.admitted, 3, 'three listings, no capabilities');
    assert.equal(admission.active, 0);
    assert.equal(db.held, false);
    assert.equal(db.write_wait_ms, 2000);
    assert.ok(memory.rss_mb > 10 && memory.heap_used_mb > 1);

    // The health route: no sign-in, nothing but whether this instance can serve.
    const h = await s.api('GET', '/api/health');
    assert.equal(h.status, 200);
    assert.deepEqual(h.body, { status: 'ok' });
    assert.equal(h.headers.get('cache-control'), 'no-store');
  } finally {
    await s.close();
  }
});
