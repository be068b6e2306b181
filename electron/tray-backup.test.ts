/**
 * The tray's "Backups" line end to end, below Electron: the real server run
 * by the ServerHost sends `replica` host messages (docs/server-host-protocol.md);
 * linking a storage to a target shows "up to date", a target that fails shows
 * the failed copy and, past SERVICE_REPLICA_RPO_WARN, the amber state.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/helpers/tools';
import { ServerHost } from './server-host';
import { forkServer, realServer, serverEnv, TEST_READY_MS } from './fixtures/server-process';
import { trayIcon, trayMenu } from './tray-menu';
import type { BackupStatus, TrayState } from './types';

const tmp = tempDir('filedock-tray-backup-');
after(() => tmp.cleanup());
const ADMIN = { email: 'admin@example.com', password: 'admin-pass-1234' };

test("the tray follows the server's backup status", { skip: realServer ? undefined : 'needs the real server', timeout: 120_000 }, async () => {
  const primary = join(tmp.dir, 'primary');
  const backupDir = join(tmp.dir, 'backup');
  mkdirSync(primary);
  const h = new ServerHost({
    fork: forkServer,
    env: () =>
      serverEnv(join(tmp.dir, 'data'), {
        SERVICE_ADMIN_EMAIL: ADMIN.email,
        SERVICE_ADMIN_PASSWORD: ADMIN.password,
        SERVICE_REPLICA_RETRY_BACKOFF: '100ms',
        SERVICE_REPLICA_RPO_WARN: '2s',
      }),
    readyTimeoutMs: TEST_READY_MS,
    drainTimeoutMs: 3000,
    killGraceMs: 1000,
  });
  let backup: BackupStatus | null = null;
  const seen: (BackupStatus | null)[] = [];
  h.on('backup', (b) => {
    backup = b;
    seen.push(b);
  });
  const until = async (what: string, ok: (b: BackupStatus | null) => boolean) => {
    const end = Date.now() + 40_000;
    while (!ok(backup)) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last ${JSON.stringify(backup)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const tray = (): TrayState => ({
    server: h.snapshot(),
    settings: { lanAccess: false, startAtLogin: false, publicUrl: '' },
    lanUrl: null,
    activity: { transfers: 0, ops: 0, syncing: false },
    backup,
    paused: false,
    keepingAwake: false,
    update: { state: 'idle' },
  });
  try {
    const { url } = await h.start();
    const call = async (method: string, path: string, body?: unknown, token?: string) => {
      const r = await fetch(url + path, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await r.json().catch(() => null);
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    // Sent once at start: nothing linked yet, and the tray says so (not "up to date").
    await until('the first status', (b) => b !== null);
    assert.equal(backup!.linked, false);
    assert.equal(
      trayMenu(tray()).some((e) => e.kind === 'label' && e.label.includes('Backups')),
      false,
    );
    assert.ok(trayMenu(tray()).some((e) => e.kind === 'label' && e.label === 'No backups set up'));

    const token = (await call('POST', '/api/auth/login', ADMIN)).token;
    const storage = await call('POST', '/api/admin/storages', { name: 'Home', driver: 'local', config: { path: primary } }, token);
    const target = await call('POST', '/api/admin/replication-targets', { name: 'nas', driver: 'local', config: { path: backupDir } }, token);
    await call('PATCH', `/api/admin/storages/${storage.id}`, { replica_target_id: target.id }, token);
    await until('linked', (b) => !!b?.linked);
    assert.ok(trayMenu(tray()).some((e) => e.kind === 'label' && e.label === 'Backups: up to date'));
    assert.equal(trayIcon(tray()), 'running');

    // The target's folder replaced by a file: copies fail, the recovery point grows past 2 s.
    await call('POST', '/api/files/save-text', { path: '/Home/ok.txt', content: 'ok' }, token);
    renameSync(backupDir, backupDir + '.away');
    writeFileSync(backupDir, 'not a folder');
    await call('POST', '/api/files/save-text', { path: '/Home/lost.txt', content: 'while down' }, token);
    await until('amber', (b) => !!b?.warn && b.unresolved >= 1);
    assert.equal(trayIcon(tray()), 'warn');
    const line = trayMenu(tray()).find((e) => e.kind === 'label' && e.label.includes('Backups')) as { label: string };
    assert.match(line.label, /^⚠ Backups: less than a minute behind · \d+ failed cop(y|ies)$/);

    // A disabled target backs up nothing: the tray says so again, without amber.
    await call('PATCH', `/api/admin/replication-targets/${target.id}`, { enabled: false }, token);
    await until('unlinked by the disabled target', (b) => b?.linked === false);
    assert.ok(trayMenu(tray()).some((e) => e.kind === 'label' && e.label === 'No backups set up'));
    assert.equal(trayIcon(tray()), 'running');
  } finally {
    await h.stop();
  }
  assert.equal(seen.at(-1), null, 'the host forgets the status when the server stops');
});
