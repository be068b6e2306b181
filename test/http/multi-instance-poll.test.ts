/**
 * Several instances on one PostgreSQL poll a storage once per interval, not
 * once per instance (docs/operations.md, "Several instances"): each arms its
 * own timer, and the first to fire takes the slot. Two `service serve`
 * processes, one local storage polled every 5 s, 16 s counted.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { CHILD_ADMIN as ADMIN, spawnServer, type ChildServer } from '../helpers/child-server';
import { tempDir } from '../helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';

const skip = needPostgres();
const INTERVAL_S = 5;
const WINDOW_MS = 16_000;
let cluster: PgCluster;
let url: string;
const tmp = tempDir('filedock-poll-');
const running: ChildServer[] = [];

before(async () => {
  if (skip) return;
  cluster = await startPostgres();
  url = await cluster.createDatabase('poll');
  writeFileSync(join(tmp.dir, 'key'), randomBytes(32).toString('base64'), { mode: 0o600 });
  mkdirSync(join(tmp.dir, 'polled'));
});
after(async () => {
  for (const s of running) await s.stop().catch(() => {});
  await cluster?.destroy();
  tmp.cleanup();
});

test('two instances poll a storage once per interval between them', { skip: skip ?? false, timeout: 180_000 }, async () => {
  const start = async (name: string) => {
    const s = await spawnServer({
      SERVICE_DATABASE_URL: url, SERVICE_SECRET_KEY_FILE: join(tmp.dir, 'key'), SERVICE_DATA_DIR: join(tmp.dir, name),
      SERVICE_ADMIN_EMAIL: ADMIN.email, SERVICE_ADMIN_PASSWORD: ADMIN.password,
    });
    running.push(s);
    return s;
  };
  const a = await start('a');
  const login = await (await fetch(`${a.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json();
  const made = await fetch(`${a.url}/api/admin/storages`, {
    method: 'POST', headers: { authorization: `Bearer ${login.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Polled', driver: 'local', config: { path: join(tmp.dir, 'polled') }, sync_mode: 'poll', sync_interval_s: INTERVAL_S }),
  });
  assert.equal(made.status, 200, await made.text());
  // B starts after the storage exists, so it arms a poll timer for it too.
  await start('b');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const t0 = new Date().toISOString();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const { rows } = await c.query("SELECT count(*)::int AS n FROM sync_runs s JOIN storages st ON st.id = s.storage_id WHERE st.name = 'Polled' AND s.kind = 'full' AND s.started_at > $1", [t0]);
    const slots = WINDOW_MS / 1000 / INTERVAL_S;
    // One instance alone: about `slots` runs; two each polling for themselves: about twice that.
    assert.ok(rows[0].n >= Math.floor(slots) - 1 && rows[0].n <= Math.ceil(slots) + 1, `${rows[0].n} polls in ${WINDOW_MS / 1000} s at ${INTERVAL_S} s`);
  } finally {
    await c.end();
  }
});
