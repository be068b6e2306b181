/**
 * Scheduled backups and "back up now" (/api/admin/backups): settings checked
 * field by field, archives written into a storage folder through the file
 * service (catalogued, audited), the newest `keep` kept, the schedule firing,
 * and the last backup's age for Admin → Status.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { verifyBackup } from '../../server/backup';
import { sqlRow } from '../helpers/sql';

describe('admin backups', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;
  const call = (method: string, path: string, body?: unknown) => s.api(method, `/api/admin/backups${path}`, { token: admin, body });
  const until = async <T>(what: string, fn: () => Promise<T | undefined>): Promise<T> => {
    for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
      const v = await fn();
      if (v !== undefined) return v;
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const backUpNow = async () => {
    const r = await call('POST', '/run');
    assert.equal(r.status, 202, JSON.stringify(r.body));
    return until('the backup op', async () => {
      const op = (await s.api('GET', `/api/files/ops/${r.body.op_id}`, { token: admin })).body;
      if (op.status === 'failed') throw new Error(JSON.stringify(op));
      return op.status === 'completed' ? op : undefined;
    });
  };

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-backups-'));
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Vault', driver: 'local', config: { path: root } } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  test('defaults: no schedule, keep 7, no target, no backup yet (stale: amber)', async () => {
    const r = await call('GET', '');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.settings, { cron: '', keep: 7, target: '' });
    assert.deepEqual(r.body.backups, []);
    assert.equal(r.body.last, null);
    assert.equal(r.body.stale, true);
    assert.equal(r.body.stale_after_s, 8 * 86_400);
    assert.equal((await s.api('GET', '/api/admin/backups', {})).status, 401);
  });

  test('bad settings are refused naming the field, and change nothing', async () => {
    const refused = async (body: unknown, field: string) => {
      const r = await call('PATCH', '/settings', body);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error, 'validation_failed');
      assert.equal(r.body.details.field, field, JSON.stringify(r.body));
    };
    await refused({ cron: 'every day' }, 'cron');
    await refused({ keep: 0 }, 'backup_keep');
    await refused({ target: '/Nowhere/backups' }, 'target');
    await refused({ target: '/Vault' }, 'target');
    await refused({ cron: '0 3 * * *' }, 'target');
    await refused({ keep: 3, cron: '0 3 * * *' }, 'target');
    assert.deepEqual((await call('GET', '')).body.settings, { cron: '', keep: 7, target: '' });
    assert.equal((await call('POST', '/run')).status, 400, 'no target, no backup');
  });

  test('back up now writes through the file service into the target; only the newest `keep` stay', async () => {
    const set = await call('PATCH', '/settings', { target: '/Vault/Backups/', keep: 2 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body.settings, { cron: '', keep: 2, target: '/Vault/Backups' });
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      await backUpNow();
      names.push((await call('GET', '')).body.last.file);
    }
    const view = (await call('GET', '')).body;
    assert.deepEqual(
      view.backups.map((b: { name: string }) => b.name),
      [names[2], names[1]],
      'newest first, the oldest deleted',
    );
    assert.equal(view.last.trigger, 'manual');
    assert.equal(view.last.where, '/Vault/Backups');
    assert.equal(view.stale, false);
    assert.ok(view.age_s >= 0 && view.age_s < 3600);
    assert.deepEqual(
      readdirSync(join(root, 'Backups'))
        .filter((n) => n.endsWith('.zip'))
        .sort(),
      [names[1], names[2]].sort(),
    );
    const listing = await s.api('GET', '/api/files/manager?path=/Vault/Backups', { token: admin });
    assert.deepEqual(listing.body.entries.map((e: { name: string }) => e.name).sort(), [names[1], names[2]].sort(), 'catalogued by the write gate');
    const m = await verifyBackup(join(root, 'Backups', names[2]));
    assert.equal(m.database, s.server.db.dialect);
    assert.ok(m.entries.some((e) => e.name === 'secret.key'));
    const audits = (await sqlRow(s.server.db, "SELECT count(*) AS n FROM audit WHERE action = 'backup.create'")) as { n: number };
    assert.equal(audits.n, 3);
  });

  test('the schedule fires a backup on its own', async () => {
    const before = (await call('GET', '')).body.last.file;
    const set = await call('PATCH', '/settings', { cron: '* * * * * *' });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.stale_after_s, 2);
    const last = await until('a scheduled backup', async () => {
      const l = (await call('GET', '')).body.last;
      return l.trigger === 'schedule' && l.file !== before ? l : undefined;
    });
    assert.match(last.file, /^filedock-backup-/);
    assert.equal((await call('PATCH', '/settings', { cron: '' })).status, 200);
  });
});
