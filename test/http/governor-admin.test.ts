/** The governor's admin face: the `governor` section of GET /api/admin/status and GET/PATCH /api/admin/governor (docs/desktop.md). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server';
import { ConfigError, loadConfig } from '../../server/config';
import { DEFAULT_TENANT } from '../../server/db';

test('the budget is an admin setting in range (400 with the field otherwise) and the status shows it live', async () => {
  const s = await startTestServer({ SERVICE_BACKGROUND_CPU: '150', SERVICE_POWER_STATE: 'busy' });
  try {
    const admin = await s.login();
    await s.server.auth.users.create(DEFAULT_TENANT, { email: 'u@example.test', password: 'user-password-1', role: 'user' });
    const user = await s.login('u@example.test', 'user-password-1');
    assert.equal((await s.api('GET', '/api/admin/governor', { token: user })).status, 403);
    assert.equal((await s.api('PATCH', '/api/admin/governor', { token: user, body: { background_cpu_percent: 10 } })).status, 403);

    const g = (await s.api('GET', '/api/admin/status', { token: admin })).body.governor;
    assert.equal(g.budget_percent, 150, 'from SERVICE_BACKGROUND_CPU');
    assert.equal(g.lanes, 1, 'a busy user: one lane');
    assert.deepEqual(g.power, { on_battery: false, user_idle: false, sleeping: false, source: 'override' });
    for (const k of ['cpu_percent', 'window_s', 'active', 'waiting', 'max_lanes']) assert.equal(typeof g[k], 'number', k);

    for (const bad of [-1, 6401, 12.5, '50', true]) {
      const r = await s.api('PATCH', '/api/admin/governor', { token: admin, body: { background_cpu_percent: bad } });
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.equal(r.body.error, 'validation_failed');
      assert.equal(r.body.details.field, 'background_cpu_percent');
    }
    assert.equal((await s.api('PATCH', '/api/admin/governor', { token: admin, body: { other: 1 } })).status, 400);
    assert.equal(
      (await s.api('PATCH', '/api/admin/governor', { token: admin, raw: '{"background_cpu_percent":', headers: { 'content-type': 'application/json' } }))
        .status,
      400,
    );

    const ok = await s.api('PATCH', '/api/admin/governor', { token: admin, body: { background_cpu_percent: 40 } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.settings.background_cpu_percent, 40);
    assert.equal(ok.body.status.budget_percent, 40, 'applies at once');
    assert.equal((await s.api('GET', '/api/admin/status', { token: admin })).body.governor.budget_percent, 40);
    const back = await s.api('PATCH', '/api/admin/governor', { token: admin, body: { background_cpu_percent: null } });
    assert.equal(back.body.status.budget_percent, 150, 'null follows the environment again');
  } finally {
    await s.close();
  }
});

test('a budget or power state out of range in the environment stops the start naming the variable', () => {
  for (const [key, value] of [
    ['SERVICE_BACKGROUND_CPU', '6401'],
    ['SERVICE_BACKGROUND_CPU', 'half'],
    ['SERVICE_POWER_STATE', 'asleep'],
  ]) {
    assert.throws(
      () => loadConfig({ SERVICE_DATA_DIR: '/tmp/unused', [key]: value }),
      (e: Error) => e instanceof ConfigError && e.message.includes(key),
      `${key}=${value}`,
    );
  }
  assert.equal(loadConfig({ SERVICE_DATA_DIR: '/tmp/unused' }).backgroundCpu, 100, 'one core by default');
});
