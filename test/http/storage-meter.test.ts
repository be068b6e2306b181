// Over 60 s in CI (test-timings.json; issue 37): a 10,000-object prefix on s3rver polled through a simulated day behind a counting proxy.
/**
 * The request meter of metered storages against a real S3 server (s3rver)
 * behind a counting proxy: the meter's counts equal the requests the backend
 * saw; a static prefix of 10,000 objects polled for a simulated day (clock
 * injected into the meter, polls driven as the poll timer would, each after
 * the backed-off delay) stays within its budget; a spent budget makes
 * background sync wait with a reason until the next day while listings still
 * work; a clock jumping across midnight and back neither resets a day twice
 * nor counts a request twice; out-of-range settings answer 400 with the field.
 * Text extraction runs as in production: it reads the `.txt` objects only up to
 * half of each day's budget (fulltext/budget.ts), so the day's plan holds, and
 * its reads are in the meter's books like the sync's.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { startS3rver, seedObjects, s3rverConfig, type S3rver } from '../helpers/s3rver';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy';
import { RequestMeter } from '../../server/catalogue';
import { sqlValue } from '../helpers/sql';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY = 86_400_000;
const D = Date.parse('2030-03-10T00:00:00Z');

describe('request meter and daily budget (s3rver)', () => {
  let s3: S3rver;
  let proxy: CountingProxy;
  let s: TestServer;
  let admin: string;
  let clock = D;
  let staticId = 0;

  before(async () => {
    s3 = await startS3rver();
    // 10 folders of 1,000 objects: 10 ListObjectsV2 pages for a full walk.
    const objs = [];
    for (let f = 0; f < 10; f++) for (let i = 0; i < 1000; i++) objs.push({ key: `static/f${f}/o${i}.txt`, body: `${f}-${i}` });
    objs.push({ key: 'small/a.txt', body: 'a' }, { key: 'small/b.txt', body: 'b' });
    assert.equal(seedObjects(s3, objs), 10_002);
    proxy = await startCountingProxy(s3.endpoint);
    s = await startTestServer();
    admin = await s.login();
    s.server.services.catalogue.meter.now = () => clock;
  });
  after(async () => {
    await s?.close();
    await proxy?.close();
    await s3?.close();
  });

  const create = async (name: string, prefix: string) => {
    const r = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { name, driver: 's3', config: { ...s3rverConfig(s3, prefix), endpoint: proxy.url }, sync_mode: 'poll', sync_interval_s: 900 },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.id as number;
  };
  const waitRun = async (runId: number) => {
    for (let i = 0; i < 1200; i++) {
      const r = (await s.api('GET', `/api/admin/sync/runs/${runId}`, { token: admin })).body;
      if (r.status === 'completed' || r.status === 'failed') return r;
      await sleep(50);
    }
    throw new Error(`run ${runId} did not finish`);
  };
  const waitIdle = async (id: number) => {
    for (let i = 0; i < 1200; i++) {
      const runs = (await s.api('GET', `/api/admin/sync/runs?storage_id=${id}`, { token: admin })).body.runs as Array<{ id: number; status: string }>;
      if (runs.length && runs.every((r) => r.status === 'completed' || r.status === 'failed')) return runs;
      await sleep(50);
    }
    throw new Error('sync did not settle');
  };
  const meter = async (id: number) => (await s.api('GET', `/api/admin/storages/${id}/meter`, { token: admin })).body;
  /** Until the storage's `files` text files are extracted (the sync's hooks queue them after its run is recorded). */
  const extracted = async (id: number, files: number) => {
    const done = () =>
      sqlValue<number>(s.server.db, "SELECT count(*) FROM text_extracts x JOIN nodes n ON n.id = x.node_id WHERE n.storage_id = ? AND x.state = 'done'", id);
    for (let i = 0; i < 1200 && Number(await done()) < files; i++) await sleep(50);
    assert.equal(Number(await done()), files, 'text extraction did not settle');
  };
  const sum = (days: Array<Record<string, number | string>>, k: string) => days.reduce((a, d) => a + (d[k] as number), 0);
  /** Every request of every storage the meter booked, summed over the days shown. */
  const booked = async (ids: number[]) => {
    const t = { list: 0, head: 0, get: 0, put: 0 };
    for (const id of ids) {
      const v = await meter(id);
      for (const k of Object.keys(t) as Array<keyof typeof t>) t[k] += sum(v.days, k);
    }
    return t;
  };

  test('10,000 static objects polled for a simulated day stay within the budget; the meter equals what s3rver saw', async () => {
    const syncer = s.server.services.catalogue.syncer;
    const id = (staticId = await create('Static', 'static'));
    assert.equal((await s.api('PUT', `/api/admin/storages/${id}/meter`, { token: admin, body: { request_budget_per_day: 400 } })).status, 200);
    await waitIdle(id);
    const nodes = s.server.db.sqlite!.prepare("SELECT count(*) AS n FROM nodes WHERE storage_id = ? AND type = 'file'").get(id) as { n: number };
    assert.equal(nodes.n, 10_000);
    let runs = 1;
    const delays: number[] = [];
    for (;;) {
      const delay = syncer.pollDelayMs(id);
      if (clock + delay >= D + DAY) break;
      clock += delay;
      delays.push(delay / 60_000);
      const runId = await syncer.pollNow(id);
      assert.ok(runId, `poll at +${(clock - D) / 3_600_000} h was not refused`);
      assert.equal((await waitRun(runId)).status, 'completed');
      runs++;
    }
    const v = await meter(id);
    const day = v.days.find((d: { day: string }) => d.day === '2030-03-10');
    const used = day.list + day.head + day.get;
    console.log(
      `simulated day: ${runs} syncs, delays (min) ${delays.join(',')}; ${day.list} LIST ${day.head} HEAD ${day.get} GET ${day.put} PUT; estimate $${v.estimated_monthly_cost}/month`,
    );
    // Backoff: 15, 30, 60 min then 2 h (8× the interval) — far fewer than the 96 polls of a fixed 15 min interval.
    assert.deepEqual(delays.slice(0, 5), [15, 30, 60, 120, 120]);
    assert.ok(runs <= 16, `${runs} syncs`);
    assert.ok(used <= 400, `${used} requests within the budget of 400`);
    // Extraction read the `.txt` objects up to its half of the budget, never more.
    assert.ok(day.get <= 200, `${day.get} extraction GETs`);
    assert.ok(day.list >= runs * 10, 'each full sync walks its 10 pages');
    assert.equal(v.exhausted, false);
    assert.equal((await s.api('GET', `/api/admin/storages/${id}`, { token: admin })).body.status_reason ?? null, null);
    // Estimate: the one day with requests × 30 at the S3 default prices.
    const expect = ((day.list * 0.005 + day.head * 0.0004 + day.get * 0.0004 + day.put * 0.005) / 1000) * 30;
    assert.ok(Math.abs(v.estimated_monthly_cost - expect) < 0.0001, `${v.estimated_monthly_cost} vs ${expect}`);
    // A user opening a folder revalidates that folder only (one delimited listing, not the 10-page walk)
    // and brings polling back to the storage's own interval.
    assert.equal(syncer.pollDelayMs(id), 8 * 900_000);
    const listsBefore = proxy.counts.list;
    const close = syncer.openFolder(id, 'f3');
    for (let i = 0; i < 200 && proxy.counts.list === listsBefore; i++) await sleep(25);
    await sleep(500);
    close();
    assert.ok(proxy.counts.list - listsBefore >= 1 && proxy.counts.list - listsBefore <= 2, `${proxy.counts.list - listsBefore} LIST for one folder`);
    assert.equal(syncer.pollDelayMs(id), 900_000);
    // The meter counts an attempt when its answer has come (a 1,000-key page can take a while on a loaded
    // machine); the proxy when it was sent: poll until they agree, with a generous bound.
    let t = await booked([id]);
    for (let i = 0; i < 200 && JSON.stringify(t) !== JSON.stringify(proxy.counts); i++) t = (await sleep(50), await booked([id]));
    assert.deepEqual(t, proxy.counts, 'meter equals the requests s3rver saw');
    // Extraction on: the storage's day is at least at extraction's share (it reads until then, and waits there).
    assert.ok(t.get > 0 && t.list + t.head + t.get >= 200, JSON.stringify(t));
  });

  test('a spent budget makes background sync wait and say so; listings still work; the next day it resumes', async () => {
    const syncer = s.server.services.catalogue.syncer;
    const before = { ...proxy.counts };
    // On this new day extraction goes on with Static's backlog (up to its half again): its requests are in the books too.
    const bookedBefore = await booked([staticId]);
    clock = D + 2 * DAY + 3_600_000;
    const id = await create('Small', 'small');
    await waitIdle(id);
    await extracted(id, 2);
    const used = (await meter(id)).used_today;
    assert.ok(used >= 1);
    const put = await s.api('PUT', `/api/admin/storages/${id}/meter`, { token: admin, body: { request_budget_per_day: used } });
    assert.equal(put.body.exhausted, true);
    clock += syncer.pollDelayMs(id);
    assert.equal(await syncer.pollNow(id), null, 'background sync waits');
    const st = (await s.api('GET', `/api/admin/storages/${id}`, { token: admin })).body;
    assert.equal(st.status, 'online');
    assert.match(st.status_reason, /request budget spent .* waits until 2030-03-13 00:00 UTC/);
    const status = (await s.api('GET', '/api/admin/status', { token: admin })).body;
    const line = status.request_budgets.find((b: { storage_id: number }) => b.storage_id === id);
    assert.deepEqual({ used: line.used_today, budget: line.budget_per_day, exhausted: line.exhausted }, { used, budget: used, exhausted: true });
    // A user's listing is never refused (and its requests are still counted).
    const list = await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/Small' } });
    assert.ok(list.status < 300, JSON.stringify(list.body));
    const files = await s.api('GET', '/api/files/manager?path=/Small', { token: admin });
    assert.deepEqual(files.body.entries.map((e: { name: string }) => e.name).sort(), ['a.txt', 'b.txt']);
    // Next (simulated) day: the poll runs again and the reason goes away.
    clock = D + 3 * DAY + 30_000;
    const runId = await syncer.pollNow(id);
    assert.ok(runId);
    assert.equal((await waitRun(runId)).status, 'completed');
    assert.equal((await s.api('GET', `/api/admin/storages/${id}`, { token: admin })).body.status_reason ?? null, null);
    const v = await meter(id);
    assert.equal(v.today, '2030-03-13');
    assert.ok(v.used_today >= 1 && v.used_today < used + 5);
    const delta = async () => {
      const t = await booked([staticId, id]);
      const k = ['list', 'head', 'get', 'put'] as const;
      return [Object.fromEntries(k.map((c) => [c, t[c] - bookedBefore[c]])), Object.fromEntries(k.map((c) => [c, proxy.counts[c] - before[c]]))];
    };
    let [t, seen] = await delta();
    for (let i = 0; i < 200 && JSON.stringify(t) !== JSON.stringify(seen); i++) [t, seen] = (await sleep(50), await delta());
    assert.deepEqual(t, seen);
  });

  test('a clock jumping across midnight and back resets the day once and counts each request once; a restart keeps the count', async () => {
    const cat = s.server.services.catalogue;
    const midnight = D + 5 * DAY;
    clock = midnight - 1000;
    const id = await create('Jumpy', 'small');
    await waitIdle(id);
    await extracted(id, 2);
    const driver = await s.server.catalogue.driverFor(id);
    const base = (await meter(id)).used_today;
    await s.api('PUT', `/api/admin/storages/${id}/meter`, { token: admin, body: { request_budget_per_day: base + 2 } });
    await driver.stat('a.txt');
    await driver.stat('b.txt');
    assert.match((await cat.meter.blocked(id)) ?? '', /budget spent/);
    clock = midnight + 1000; // midnight passes: a new day, a fresh budget
    assert.equal(await cat.meter.blocked(id), null);
    await driver.stat('a.txt');
    await cat.meter.flush();
    clock = midnight - 2000; // the clock is corrected backwards: yesterday is not reset a second time
    assert.match((await cat.meter.blocked(id)) ?? '', /budget spent/);
    await driver.stat('a.txt');
    clock = midnight + 5000;
    await driver.stat('b.txt');
    const v = await meter(id);
    const byDay = Object.fromEntries(v.days.map((d: { day: string; head: number }) => [d.day, d.head]));
    assert.equal(byDay['2030-03-15'], 2);
    const prev = v.days.find((d: { day: string }) => d.day === '2030-03-14');
    assert.equal(prev.list + prev.head + prev.get, base + 3);
    // What a restart does: a new meter on the same database starts from the stored count.
    const fresh = new RequestMeter(s.server.db, cat.repo, () => ({}));
    fresh.now = () => clock;
    assert.equal(await fresh.usedToday(id), 2);
    fresh.now = () => midnight - 1;
    assert.equal(await fresh.usedToday(id), base + 3);
  });

  test('out-of-range budget and prices answer 400 with the field; edited prices change the estimate', async () => {
    const id = (await s.api('GET', '/api/admin/storages', { token: admin })).body.storages[0].id;
    for (const bad of [-1, 1.5, 100_000_001, 'ten', null]) {
      const r = await s.api('PUT', `/api/admin/storages/${id}/meter`, { token: admin, body: { request_budget_per_day: bad } });
      assert.equal(r.status, 400, String(bad));
      assert.equal(r.body.error, 'validation_failed');
      assert.equal(r.body.details.field, 'request_budget_per_day');
    }
    const r = await s.api('PUT', '/api/admin/meter/prices', { token: admin, body: { prices: { s3: { list: -1, head: 0, get: 0, put: 0 } } } });
    assert.equal(r.status, 400);
    assert.equal(r.body.details.field, 'prices.s3.list');
    const big = await s.api('PUT', '/api/admin/meter/prices', { token: admin, body: { prices: { s3: { list: 1, head: 0, get: 0, put: 1001 } } } });
    assert.equal(big.body.details.field, 'prices.s3.put');
    assert.equal((await s.api('PUT', '/api/admin/storages/999999/meter', { token: admin, body: { request_budget_per_day: 5 } })).status, 404);
    const ok = await s.api('PUT', '/api/admin/meter/prices', { token: admin, body: { prices: { s3: { list: 1, head: 0, get: 0, put: 0 } } } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.prices.s3.list, 1);
    assert.equal(ok.body.defaults.s3.list, 0.005);
    const v = (await s.api('GET', `/api/admin/storages/${id}/meter`, { token: admin })).body;
    assert.deepEqual(v.prices, { list: 1, head: 0, get: 0, put: 0 });
    const user = await s.api('GET', `/api/admin/storages/${id}/meter`, {});
    assert.equal(user.status, 401);
  });
});
