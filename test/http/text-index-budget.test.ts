/**
 * Text extraction on a metered storage (issue 34) against a real S3 server (s3rver) behind a counting proxy,
 * with the meter's clock injected as in storage-meter.test.ts: extraction's reads are booked like every other
 * request (the meter equals what the proxy saw); it stops at half the daily budget (fulltext/budget.ts) and
 * its files stay pending, with no read and no op re-queued every few ms, and a wake-up op queued instead;
 * Admin → Status says the storage waits on its budget; the next (simulated) day the wake-up op reads the rest
 * and their words are found; a raised budget lets extraction go on at once.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { startS3rver, seedObjects, s3rverConfig, type S3rver } from '../helpers/s3rver';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy';
import { docxWith } from '../helpers/documents';
import { sqlRows, sqlValue } from '../helpers/sql';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY = 86_400_000;
const D = Date.parse('2030-03-10T00:00:00Z');
const BUDGET = 40;
const LIMIT = BUDGET / 2;
const FILES = 30;
/** A word only the file `n` holds. */
const word = (n: number) => `quokka${String.fromCharCode(97 + (n % 26))}${String.fromCharCode(97 + Math.floor(n / 26))}zz`;

describe('text extraction within a request budget (s3rver)', () => {
  let s3: S3rver;
  let proxy: CountingProxy;
  let s: TestServer;
  let admin: string;
  let clock = D + 3_600_000;
  let id = 0;

  before(async () => {
    s3 = await startS3rver();
    proxy = await startCountingProxy(s3.endpoint);
    // Thumbnails on sync off: a docx's thumbnail is a GET of its own (they do not wait on a budget either).
    s = await startTestServer({ SERVICE_THUMBS_ON_SYNC: 'false' });
    admin = await s.login();
    s.server.services.catalogue.meter.now = () => clock;
    // Created empty, so its budget is set before there is anything to read.
    const r = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { name: 'Cloud', driver: 's3', config: { ...s3rverConfig(s3, 'docs'), endpoint: proxy.url }, sync_mode: 'poll', sync_interval_s: 900 },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    id = r.body.id;
    await waitIdle();
    assert.equal((await s.api('PUT', `/api/admin/storages/${id}/meter`, { token: admin, body: { request_budget_per_day: BUDGET } })).status, 200);
  });
  after(async () => {
    await s?.close();
    await proxy?.close();
    await s3?.close();
  });

  const waitIdle = async () => {
    for (let i = 0; i < 1200; i++) {
      const runs = (await s.api('GET', `/api/admin/sync/runs?storage_id=${id}`, { token: admin })).body.runs as Array<{ status: string }>;
      if (runs.length && runs.every((r) => r.status === 'completed' || r.status === 'failed')) return;
      await sleep(50);
    }
    throw new Error('sync did not settle');
  };
  /** A background poll as the poll timer would run it, to its end. */
  const sync = async () => {
    assert.ok(await s.server.services.catalogue.syncer.pollNow(id), 'poll refused');
    await waitIdle();
  };
  const meter = async () => (await s.api('GET', `/api/admin/storages/${id}/meter`, { token: admin })).body;
  const states = async () => {
    const rows = await sqlRows<{ state: string; n: number }>(
      s.server.db,
      'SELECT x.state, count(*) AS n FROM text_extracts x JOIN nodes n ON n.id = x.node_id WHERE n.storage_id = ? GROUP BY x.state',
      id,
    );
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)])) as Record<string, number>;
  };
  const until = async (what: string, ok: () => Promise<boolean>) => {
    for (let i = 0; i < 600; i++) {
      if (await ok()) return;
      await sleep(50);
    }
    throw new Error(`${what}: not within 30 s`);
  };
  /**
   * No drain op running or due now (a wake-up op queued for later does not count). The sync's hooks run after
   * its run is recorded: callers first wait for the rows the sync sends to `pending`.
   */
  const drained = async (ms = 30_000) => {
    const until = Date.now() + ms;
    for (;;) {
      const live = await sqlValue<number>(
        s.server.db,
        "SELECT count(*) FROM ops WHERE kind = 'text.extract' AND (status = 'running' OR (status = 'queued' AND run_at <= ?))",
        new Date().toISOString(),
      );
      if (Number(live) === 0) return;
      if (Date.now() > until) throw new Error('extraction did not settle');
      await sleep(100);
    }
  };
  const wakeUp = async () =>
    (await sqlRows<{ id: string; run_at: string }>(s.server.db, "SELECT id, run_at FROM ops WHERE dedup_key = 'text.extract:budget' AND status = 'queued'"))[0];
  const textStatus = async () => {
    const st = (await s.api('GET', '/api/admin/status', { token: admin })).body;
    return st.text_index.storages.find((x: { storage_id: number }) => x.storage_id === id);
  };
  const found = async (q: string) =>
    (await s.api('GET', `/api/files/search?q=${encodeURIComponent(q)}`, { token: admin })).body.entries.map((e: any) => e.name);
  /** The meter's LIST/HEAD/GET/PUT over the days it shows, once they equal what the proxy saw (it books an attempt when its answer has come). */
  const bookedEqualsProxy = async () => {
    const sum = async () => {
      const t = { list: 0, head: 0, get: 0, put: 0 };
      for (const d of (await meter()).days) for (const k of Object.keys(t) as Array<keyof typeof t>) t[k] += d[k];
      return t;
    };
    let t = await sum();
    for (let i = 0; i < 100 && JSON.stringify(t) !== JSON.stringify(proxy.counts); i++) t = (await sleep(50), await sum());
    assert.deepEqual(t, proxy.counts, 'the meter booked every request the proxy saw, extraction reads included');
  };

  test('extraction stops at half the budget, its files wait without reads or busy ops, the status says so; its reads are booked', async () => {
    const objs = Array.from({ length: FILES }, (_, n) => ({ key: `docs/t${String(n).padStart(2, '0')}.txt`, body: `note ${n}: the ${word(n)} is here` }));
    seedObjects(s3, objs);
    await sync();
    await until('extraction reaches its share and queues its wake-up', async () => !!(await wakeUp()));
    await drained();
    const used = (await meter()).used_today;
    const st = await states();
    console.log(`day 1: ${used} of ${BUDGET} used (limit ${LIMIT}); ${JSON.stringify(st)}; proxy ${JSON.stringify(proxy.counts)}`);
    // The share holds, and extraction took it (one short when a lane checked while the other's read was counted
    // but not yet resolved: that read is then seen twice, in the count and in flight).
    assert.ok(used <= LIMIT, `${used} requests, extraction's limit ${LIMIT}`);
    assert.ok(used >= LIMIT - 1, `${used}: extraction used its share`);
    assert.equal((st.done ?? 0) + (st.pending ?? 0), FILES);
    assert.ok(st.pending > 0 && st.done > 0, JSON.stringify(st));
    assert.equal(st.done, proxy.counts.get, 'one GET per text file');
    assert.equal(st.failed ?? 0, 0);
    await bookedEqualsProxy();

    // Waiting: no read, no op re-queued, the files stay pending; a wake-up op within the hour (the day ends in 23 h).
    const gets = proxy.counts.get;
    const ops = Number(await sqlValue(s.server.db, "SELECT count(*) FROM ops WHERE kind = 'text.extract'"));
    const wake = await wakeUp();
    assert.ok(wake, 'a wake-up op is queued');
    const inMs = Date.parse(wake.run_at) - Date.now();
    assert.ok(inMs > 55 * 60_000 && inMs <= 60 * 60_000 + 5_000, `wake-up in ${inMs} ms`);
    // New files of the storage ask for a drain: it finds nothing it may read.
    seedObjects(s3, [{ key: 'docs/later.txt', body: 'the lateword arrives' }]);
    await sync();
    await until('the new file waits', async () => (await states()).pending === st.pending + 1);
    await drained();
    await sleep(2_000);
    assert.equal(proxy.counts.get, gets, 'no GET while waiting');
    const opsNow = Number(await sqlValue(s.server.db, "SELECT count(*) FROM ops WHERE kind = 'text.extract'"));
    assert.ok(opsNow - ops <= 2, `${opsNow - ops} drain ops in the wait (one per sync batch at most)`);
    assert.equal((await states()).pending, st.pending + 1);
    assert.equal((await wakeUp()).id, wake.id, 'still one wake-up op');

    const line = await textStatus();
    assert.equal(line.pending, st.pending + 1);
    assert.deepEqual(line.waiting_budget, { used: (await meter()).used_today, limit: LIMIT, budget: BUDGET, until: '2030-03-11' });
  });

  test('the next day the wake-up op reads the rest and their words are found', async () => {
    const pending = (await states()).pending;
    const gets = proxy.counts.get;
    clock = D + DAY + 3_600_000;
    // The wake-up op's hour passes.
    await sqlRows(s.server.db, "UPDATE ops SET run_at = ? WHERE dedup_key = 'text.extract:budget' AND status = 'queued'", new Date().toISOString());
    await until('the rest is read', async () => !(await states()).pending);
    await drained();
    const st = await states();
    assert.equal(st.pending ?? 0, 0, JSON.stringify(st));
    assert.equal(proxy.counts.get - gets, pending, 'one GET per file left');
    const v = await meter();
    assert.equal(v.today, '2030-03-11');
    assert.ok(v.used_today <= LIMIT, `${v.used_today} within the new day's share`);
    assert.deepEqual(await found(word(FILES - 1)), [`t${FILES - 1}.txt`]);
    assert.deepEqual(await found('lateword'), ['later.txt']);
    assert.equal((await textStatus()).waiting_budget, null);
    assert.equal(await wakeUp(), undefined, 'no wake-up op once nothing waits');
    await bookedEqualsProxy();
  });

  test('a lowered budget makes new files wait; raising it lets extraction go on at once; an office file costs 3 GETs', async () => {
    const used = (await meter()).used_today;
    // Room for the sync's listing, while extraction's half of it is spent already.
    assert.equal((await s.api('PUT', `/api/admin/storages/${id}/meter`, { token: admin, body: { request_budget_per_day: used + 6 } })).status, 200);
    seedObjects(s3, [
      { key: 'docs/memo.docx', body: await docxWith(['Dear team,', 'the wallaby budget is approved.']) },
      { key: 'docs/more.txt', body: 'a dingo appears' },
    ]);
    await sync();
    await until('the new files wait', async () => (await states()).pending === 2);
    await drained();
    const gets = proxy.counts.get;
    assert.ok((await textStatus()).waiting_budget);
    assert.equal((await s.api('PUT', `/api/admin/storages/${id}/meter`, { token: admin, body: { request_budget_per_day: 1000 } })).status, 200);
    await until('the rest is read', async () => !(await states()).pending);
    await drained();
    assert.equal((await states()).pending ?? 0, 0);
    assert.equal(proxy.counts.get - gets, 1 + 3, 'the text file one GET, the docx its end records, directory and one block');
    assert.deepEqual(await found('wallaby'), ['memo.docx']);
    assert.deepEqual(await found('dingo'), ['more.txt']);
    assert.equal((await textStatus()).waiting_budget, null);
    await bookedEqualsProxy();
  });
});
