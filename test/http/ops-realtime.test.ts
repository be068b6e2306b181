import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { DEFAULT_TENANT } from '../../server/db';
import { tempDir } from '../helpers/tools';
import { readSse, type SseFrame } from '../helpers/sse';

// The job kind this test invents, in the typed registry.
declare module '../../server/jobs/types' {
  interface JobPayloads {
    'test.steps': { steps: number };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads SSE frames from a stream until `want` matches or the time runs out. */
const collect = (res: Response, want: (frames: SseFrame[]) => boolean, ms = 5000) => readSse(res).until(want, ms);

describe('ops routes and the realtime channel', () => {
  let s: TestServer;
  let admin: string;
  before(async () => {
    s = await startTestServer();
    admin = await s.login();
    s.server.queue.register('test.steps', async (ctx) => {
      for (let i = 0; i < ctx.payload.steps; i++) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        await sleep(20);
        ctx.progress((i + 1) / ctx.payload.steps);
      }
      return { ok: true };
    });
  });
  after(() => s.close());

  test('list, detail, progress frames and cancel (always 200)', async () => {
    const stream = await fetch(`${s.url}/api/events/stream`, { headers: { authorization: `Bearer ${admin}` } });
    assert.match(stream.headers.get('content-type')!, /^text\/event-stream/);
    const id = await s.server.queue.enqueue('test.steps', { steps: 200 }, { tenant: DEFAULT_TENANT, visible: true, ownerId: 1 });
    const frames = await collect(stream, (f) => f.some((x) => x.event === 'op' && x.data.op.status === 'running'));
    assert.ok(frames.some((f) => f.event === 'op' && f.data.op.id === id));
    const list = await s.api('GET', '/api/files/ops', { token: admin });
    assert.equal(list.body.ops[0].id, id);
    assert.equal(list.body.ops[0].kind, 'test.steps');
    assert.ok(['queued', 'running'].includes(list.body.ops[0].status));
    assert.equal((await s.api('POST', `/api/files/ops/${id}/cancel`, { token: admin })).status, 200);
    let op;
    for (let i = 0; i < 100; i++) {
      op = (await s.api('GET', `/api/files/ops/${id}`, { token: admin })).body;
      if (op.status !== 'running' && op.status !== 'queued') break;
      await sleep(20);
    }
    assert.equal(op.status, 'cancelled');
    assert.equal((await s.api('POST', '/api/files/ops/op_0000/cancel', { token: admin })).status, 200, 'unknown ids are fine');
    assert.equal((await s.api('GET', '/api/files/ops/op_0000', { token: admin })).status, 404);
    assert.equal((await s.api('GET', '/api/files/ops/not-an-op', { token: admin })).body.error, 'bad_id');
  });

  test("another user's ops are invisible", async () => {
    await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'o@example.test', username: 'other', password: 'other-password' } });
    const other = await s.login('other', 'other-password');
    const id = await s.server.queue.enqueue('test.steps', { steps: 1 }, { tenant: DEFAULT_TENANT, visible: true, ownerId: 1 });
    assert.equal((await s.api('GET', `/api/files/ops/${id}`, { token: other })).status, 404);
    assert.deepEqual((await s.api('GET', '/api/files/ops', { token: other })).body.ops, []);
  });

  test('tenants: an op moved to tenant 2 is not found, listed nor cancelled by its owner in tenant 1; moved back, it is', async () => {
    // Queued for later, so it stays queued while tenant 1 tries it.
    const id = await s.server.queue.enqueue(
      'test.steps',
      { steps: 1 },
      { tenant: DEFAULT_TENANT, visible: true, ownerId: 1, runAt: new Date(Date.now() + 600_000) },
    );
    const move = (tenant: number) => s.server.db.async.sql('UPDATE ops SET tenant_id = ? WHERE id = ?', [tenant, id]);
    const listed = async () => (await s.api('GET', '/api/files/ops', { token: admin })).body.ops.map((o: { id: string }) => o.id);
    assert.equal((await s.api('GET', `/api/files/ops/${id}`, { token: admin })).status, 200);
    await move(2);
    const got = await s.api('GET', `/api/files/ops/${id}`, { token: admin });
    assert.deepEqual([got.status, got.body.error], [404, 'not_found'], 'like a missing op');
    assert.ok(!(await listed()).includes(id), 'not listed');
    assert.equal((await s.api('POST', `/api/files/ops/${id}/cancel`, { token: admin })).status, 200, 'best effort, always 200');
    assert.equal((await s.server.queue.get({ tenant_id: 2 }, id))!.status, 'queued', 'not cancelled from tenant 1');
    await move(1);
    assert.equal((await s.api('GET', `/api/files/ops/${id}`, { token: admin })).body.status, 'queued');
    assert.ok((await listed()).includes(id));
    await s.api('POST', `/api/files/ops/${id}/cancel`, { token: admin });
    assert.equal((await s.api('GET', `/api/files/ops/${id}`, { token: admin })).body.status, 'cancelled');
  });

  test('a browser with a folder open receives change frames for that folder only', async () => {
    const { dir, cleanup } = tempDir();
    mkdirSync(join(dir, 'docs'));
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'RT', driver: 'local', config: { path: dir } } });
    assert.equal(st.status, 200);
    const open = await fetch(`${s.url}/api/events/stream?folder=${encodeURIComponent('/RT/docs')}`, { headers: { authorization: `Bearer ${admin}` } });
    const other = await fetch(`${s.url}/api/events/stream?folder=${encodeURIComponent('/RT')}`, { headers: { authorization: `Bearer ${admin}` } });
    await sleep(100);
    await s.server.catalogue.gate.written(
      st.body.id,
      'docs/note.txt',
      { name: 'note.txt', type: 'file', size: 3, mtime: Date.now() },
      { origin: 'upload', actor: { id: 1, email: 'x' } },
    );
    const frames = await collect(open, (f) => f.some((x) => x.event === 'change'));
    const change = frames.find((f) => f.event === 'change')!;
    assert.deepEqual(
      { folder: change.data.folder, path: change.data.path, kind: change.data.kind },
      { folder: '/RT/docs', path: '/RT/docs/note.txt', kind: 'created' },
    );
    const otherFrames = await collect(other, (f) => f.some((x) => x.event === 'change' && x.data.path === '/RT/docs/note.txt'), 500);
    assert.equal(otherFrames.filter((f) => f.event === 'change' && f.data.path === '/RT/docs/note.txt').length, 0);
    assert.equal((await fetch(`${s.url}/api/events/stream?folder=/Nope`, { headers: { authorization: `Bearer ${admin}` } })).status, 404);
    assert.equal((await fetch(`${s.url}/api/events/stream`)).status, 401);
    cleanup();
  });
});

describe('update routes', () => {
  test('status never touches the network; check without a manifest records the state; non-admins are refused', async () => {
    const s = await startTestServer();
    try {
      const admin = await s.login();
      const st = await s.api('GET', '/api/admin/update', { token: admin });
      assert.equal(st.status, 200);
      assert.match(st.body.current_version, /^\d+\.\d+\.\d+$/);
      assert.equal(st.body.check_enabled, false, 'SERVICE_UPDATE_CHECK=0 in tests');
      assert.equal(st.body.checked_at, null);
      const apply = await s.api('POST', '/api/admin/update/apply', { token: admin, body: {} });
      assert.equal(apply.status, 409);
      assert.equal(apply.body.error, 'update_refused');
      await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'n@example.test', username: 'nonadmin', password: 'nonadmin-pw' } });
      const user = await s.login('nonadmin', 'nonadmin-pw');
      assert.equal((await s.api('GET', '/api/admin/update', { token: user })).status, 403);
    } finally {
      await s.close();
    }
  });
});
