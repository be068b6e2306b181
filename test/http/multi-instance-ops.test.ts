/**
 * Background work seen from several instances on one PostgreSQL
 * (docs/operations.md, "Several instances"), two `service serve` processes:
 * - a polled storage is looked at once per interval between them, not once
 *   per instance (each arms its own timer; the first to fire takes the slot);
 * - an op's frames reach its owner's browsers on both instances, whichever
 *   instance runs it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { CHILD_ADMIN as ADMIN, instanceEnv, spawnServer, type ChildServer } from '../helpers/child-server';
import { tempDir } from '../helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { sse } from '../helpers/sse';

const skip = needPostgres();
const INTERVAL_S = 5;
const WINDOW_MS = 16_000;

describe('several instances: polls and op frames', { skip: skip ?? false, timeout: 240_000 }, () => {
  let cluster: PgCluster;
  let url: string;
  const tmp = tempDir('filedock-instances-');
  const running: ChildServer[] = [];
  let a: ChildServer;
  let b: ChildServer;
  let token: string;
  const api = async (base: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  const start = async (name: string) => {
    const s = await spawnServer(instanceEnv({ url, keyFile: join(tmp.dir, 'key'), dataDir: join(tmp.dir, name), files: join(tmp.dir, 'files') }));
    running.push(s);
    return s;
  };

  before(async () => {
    cluster = await startPostgres();
    url = await cluster.createDatabase('instances');
    writeFileSync(join(tmp.dir, 'key'), randomBytes(32).toString('base64'), { mode: 0o600 });
    mkdirSync(join(tmp.dir, 'polled'));
    mkdirSync(join(tmp.dir, 'files', 'src'), { recursive: true });
    for (let i = 0; i < 300; i++) writeFileSync(join(tmp.dir, 'files', 'src', `f${i}.bin`), randomBytes(16 * 1024));
    a = await start('a');
    token = (
      await (await fetch(`${a.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()
    ).token;
    const made = await api(a.url, 'POST', '/api/admin/storages', {
      name: 'Polled',
      driver: 'local',
      config: { path: join(tmp.dir, 'polled') },
      sync_mode: 'poll',
      sync_interval_s: INTERVAL_S,
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    // B starts after the storage exists, so it arms a poll timer for it too.
    b = await start('b');
  });
  after(async () => {
    for (const s of running) await s.stop().catch(() => {});
    await cluster?.destroy();
    tmp.cleanup();
  });

  test('a polled storage is looked at once per interval between the two', async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const t0 = new Date().toISOString();
      await new Promise((r) => setTimeout(r, WINDOW_MS));
      const { rows } = await c.query(
        "SELECT count(*)::int AS n FROM sync_runs s JOIN storages st ON st.id = s.storage_id WHERE st.name = 'Polled' AND s.kind = 'full' AND s.started_at > $1",
        [t0],
      );
      const slots = WINDOW_MS / 1000 / INTERVAL_S;
      // One instance alone: about `slots` runs (fewer when a loaded machine delays timers); two each polling
      // for themselves: about twice that.
      assert.ok(rows[0].n >= 1 && rows[0].n <= Math.ceil(slots) + 1, `${rows[0].n} polls in ${WINDOW_MS / 1000} s at ${INTERVAL_S} s`);
    } finally {
      await c.end();
    }
  });

  test('an op’s frames reach its owner on both instances, whichever runs it', async () => {
    const onA = await sse(`${a.url}/api/events/stream`, token);
    const onB = await sse(`${b.url}/api/events/stream`, token);
    try {
      const copy = await api(b.url, 'POST', '/api/files/copy', { from: '/Files/src', to: '/Files/dst' });
      assert.equal(copy.status, 202, JSON.stringify(copy.body));
      const id = copy.body.operation_id;
      const done = (f: { event: string; data: any }) => f.event === 'op' && f.data.op.id === id && !['queued', 'running'].includes(f.data.op.status);
      const [endA, endB] = await Promise.all([onA.waitFor(done, 60_000), onB.waitFor(done, 60_000)]);
      assert.ok(endA, 'instance A’s browser heard how the op ended');
      assert.ok(endB, 'instance B’s browser heard how the op ended');
      assert.equal(endA.data.op.status, endB.data.op.status);
      assert.equal((await api(a.url, 'GET', `/api/files/ops/${id}`)).body.status, endA.data.op.status);
    } finally {
      await onA.close();
      await onB.close();
    }
  });
});
