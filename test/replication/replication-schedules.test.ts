/**
 * The restore drill's and the content audits' schedules over the real server:
 * `drill_cron` defaults to monthly, `audit_cron` to daily and `audit_full_cron`
 * to monthly; each is checked with croner (400 at the field), empty turns it
 * off, and a due schedule queues its job by itself (a once-a-second cron here)
 * as soon as the setting changes.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { ok, putText, until } from '../helpers/replica';

let s: TestServer;
let token: string;
let cleanup: () => void;

before(async () => {
  let dir: string;
  ({ dir, cleanup } = tempDir('filedock-drill-'));
  mkdirSync(join(dir, 'primary'));
  s = await startTestServer();
  token = await s.login();
  const storage = await ok(s.api('POST', '/api/admin/storages', { token, body: { name: 'Home', driver: 'local', config: { path: join(dir, 'primary') } } }));
  const target = await ok(
    s.api('POST', '/api/admin/replication-targets', { token, body: { name: 'nas', driver: 'local', config: { path: join(dir, 'backup') }, mode: 'sync' } }),
  );
  await ok(s.api('PATCH', `/api/admin/storages/${storage.id}`, { token, body: { replica_target_id: target.id } }));
  await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: '/Home/photos' } }));
  await putText(s, token, '/Home/photos/a.txt', 'alpha');
  await putText(s, token, '/Home/photos/b.txt', 'beta');
});

after(async () => {
  await s?.close();
  cleanup?.();
});

test('drill_cron: monthly by default, croner checks it, empty is off', async () => {
  const now = await ok(s.api('GET', '/api/admin/replica/settings', { token }));
  assert.equal(now.drill_cron, '0 3 1 * *');
  const bad = await s.api('PATCH', '/api/admin/replica/settings', { token, body: { drill_cron: 'every tuesday' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, 'validation_failed');
  assert.equal(bad.body.details.field, 'drill_cron');
  assert.equal((await ok(s.api('GET', '/api/admin/replica/settings', { token }))).drill_cron, '0 3 1 * *', 'nothing stored on a 400');
  const off = await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { drill_cron: '  ' } }));
  assert.equal(off.drill_cron, '');
  // The report's cron stays mandatory.
  assert.equal((await s.api('PATCH', '/api/admin/replica/settings', { token, body: { report_cron: '' } })).status, 400);
  const set = await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { drill_cron: '0 4 15 * *' } }));
  assert.equal(set.drill_cron, '0 4 15 * *');
});

test('a due drill schedule queues a drill on its own, and the result lands', async () => {
  assert.equal((await s.api('GET', '/api/admin/replica/drill', { token })).status, 204, 'no drill yet');
  await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { drill_cron: '* * * * * *' } }));
  await until('a scheduled drill result', async () => (await s.api('GET', '/api/admin/replica/drill', { token })).status === 200, 60_000);
  await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { drill_cron: '' } }));
  const drill = await ok(s.api('GET', '/api/admin/replica/drill', { token }));
  assert.equal(drill.folder, '/Home/photos');
  assert.equal(drill.files, 2);
  assert.equal(drill.identical, 2);
  assert.equal(drill.ok, true);
});

test('audit schedules: daily sample and monthly full by default, croner and the sample size checked, empty is off', async () => {
  const now = await ok(s.api('GET', '/api/admin/replica/settings', { token }));
  assert.equal(now.audit_cron, '30 4 * * *');
  assert.equal(now.audit_full_cron, '0 5 1 * *');
  assert.equal(now.audit_sample_size, 50);
  for (const [field, value] of [
    ['audit_cron', 'daily'],
    ['audit_full_cron', '61 * * * *'],
    ['audit_sample_size', 0],
    ['audit_sample_size', 1.5],
    ['audit_sample_size', '10'],
    ['audit_sample_size', 100_001],
  ] as const) {
    const bad = await s.api('PATCH', '/api/admin/replica/settings', { token, body: { [field]: value, report_enabled: false } });
    assert.equal(bad.status, 400, `${field}: ${String(value)}`);
    assert.equal(bad.body.error, 'validation_failed');
    assert.equal(bad.body.details.field, field);
  }
  const after400 = await ok(s.api('GET', '/api/admin/replica/settings', { token }));
  assert.deepEqual(after400, now, 'nothing stored on a 400, not even the valid fields beside the bad one');
  const off = await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { audit_cron: ' ', audit_full_cron: '', audit_sample_size: 7 } }));
  assert.deepEqual([off.audit_cron, off.audit_full_cron, off.audit_sample_size], ['', '', 7]);
});

test('a due audit schedule runs at once after the change, with the sample size set; the full one audits every file', async () => {
  assert.equal((await s.api('GET', '/api/admin/replica/audit', { token })).status, 204, 'no audit yet');
  await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { audit_cron: '* * * * * *', audit_sample_size: 1 } }));
  await until('a scheduled sampled audit', async () => (await s.api('GET', '/api/admin/replica/audit', { token })).status === 200, 60_000);
  await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { audit_cron: '' } }));
  const sample = await ok(s.api('GET', '/api/admin/replica/audit', { token }));
  assert.equal(sample.kind, 'sample');
  assert.equal(sample.checked, 1, 'one file per storage, as set');
  assert.equal(sample.mismatched + sample.missing, 0);

  await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { audit_full_cron: '* * * * * *' } }));
  await until('a scheduled full audit', async () => (await ok(s.api('GET', '/api/admin/replica/audit', { token }))).kind === 'full', 60_000);
  await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { audit_full_cron: '' } }));
  const full = await ok(s.api('GET', '/api/admin/replica/audit', { token }));
  assert.equal(full.checked, 2, 'every file of the primary');
  assert.equal(full.mismatched + full.missing, 0);
});
