import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TENANT, openDatabase } from '../db';
import { JobQueue } from './queue';
import { KeepAwake } from './keep-awake';
import type { InhibitHostMessage } from '../contract';
import { tempDir } from '../../test/helpers/tools';

declare module './types' {
  interface JobPayloads {
    'awake.long': Record<string, never>;
    'awake.background': Record<string, never>;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('asks the host to keep awake while a long op or a transfer runs, not for background work, and lists what a restart resumes', async () => {
  const { dir, cleanup } = tempDir();
  const db = openDatabase(`${dir}/db.sqlite`);
  const q = new JobQueue(db, { concurrency: 4, pollMs: 20 });
  const gates: Array<() => void> = [];
  const held = () => new Promise<void>((r) => gates.push(r));
  q.register(
    'awake.long',
    async (ctx) => {
      ctx.progress(0.5, { done: 5, total: 10 });
      await held();
    },
    { keepsAwake: true, concurrency: 2 },
  );
  q.register('awake.background', () => held());
  let transfers = 0;
  const sent: InhibitHostMessage[] = [];
  const k = new KeepAwake(
    q,
    () => transfers,
    (m) => sent.push(m),
  );
  q.onOpChange(() => k.changed());
  try {
    k.flush();
    assert.deepEqual(sent, [{ type: 'inhibit', active: false, reasons: [] }], 'the first message after ready says where things stand');
    await q.start();
    await q.enqueue('awake.background', {}, { tenant: DEFAULT_TENANT });
    await sleep(400);
    assert.equal(sent.length, 1, 'background work does not keep the computer awake');

    const id = await q.enqueue('awake.long', {}, { tenant: DEFAULT_TENANT });
    await q.enqueue('awake.long', {}, { tenant: DEFAULT_TENANT });
    await sleep(400);
    assert.deepEqual(sent.at(-1), { type: 'inhibit', active: true, reasons: [{ kind: 'awake.long', count: 2 }] });
    const st = await k.status();
    assert.equal(st.active, true);
    assert.ok(st.since && Date.parse(st.since) <= Date.now());
    assert.deepEqual(
      st.resumable_ops.map((o) => [o.kind, o.status]),
      [
        ['awake.long', 'running'],
        ['awake.long', 'running'],
      ],
    );
    assert.equal(st.resumable_ops.find((o) => o.id === id)?.bytes_done, 5);

    transfers = 3;
    k.changed();
    await sleep(400);
    assert.deepEqual(sent.at(-1)?.reasons, [
      { kind: 'transfers', count: 3 },
      { kind: 'awake.long', count: 2 },
    ]);

    transfers = 0;
    gates.splice(0).forEach((g) => g());
    await sleep(600);
    assert.deepEqual(sent.at(-1), { type: 'inhibit', active: false, reasons: [] });
    assert.deepEqual(await k.status(), { active: false, since: null, reasons: [], resumable_ops: [] });
    const n = sent.length;
    k.changed();
    await sleep(400);
    assert.equal(sent.length, n, 'an unchanged state is not sent again');
  } finally {
    k.close();
    gates.forEach((g) => g());
    await q.stop(100);
    db.close();
    cleanup();
  }
});
