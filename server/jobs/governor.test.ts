import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Governor, type PowerOverride } from './governor';

/** A governor on a hand-driven clock and CPU meter: `run(ms, cores)` passes time while `cores` cores are busy. */
function rig(budgetPercent = 100, powerOverride: PowerOverride = '') {
  let t = 0;
  let cpu = 0;
  const g = new Governor({ budgetPercent, powerOverride, cpuSeconds: () => cpu, now: () => t });
  const run = (ms: number, cores: number) => {
    for (let i = 0; i < ms; i += 50) {
      t += 50;
      cpu += (cores * 50) / 1000;
      g.sample();
    }
  };
  /** Time passes with no sample taken (the next one comes from inside the governor). */
  const idle = (ms: number) => {
    t += ms;
  };
  return { g, run, idle, cpu: () => cpu };
}

test('budget: starts wait while the measured CPU is over it, and resume once the average is back under', () => {
  const { g, run } = rig(100);
  const a = g.tryAcquire();
  const b = g.tryAcquire();
  assert.ok(a && b, 'two lanes on mains power with CPU to spare');
  run(1000, 2); // both lanes burn a core each: one second of overdraft
  assert.equal(g.status().over_budget, true);
  a!();
  assert.equal(g.tryAcquire(), null, 'no start while the budget is overdrawn');
  run(500, 1); // one core at a budget of one core: the overdraft does not shrink
  assert.equal(g.tryAcquire(), null);
  b!();
  run(900, 0);
  assert.equal(g.tryAcquire(), null, 'still 0.1 s overdrawn');
  run(200, 0);
  const c = g.tryAcquire();
  assert.ok(c, 'the overdraft is paid back');
  c!();
});

test('the average over a long run stays at the budget whatever the lanes would burn', () => {
  const { g, run, cpu } = rig(100);
  // A backlog of 100 ms jobs at 1.8 cores each (a lane plus its decoder threads), started whenever a lane is granted.
  const running: Array<{ left: number; release: () => void }> = [];
  let done = 0;
  for (let step = 0; step < 1200; step++) {
    for (let r = g.tryAcquire(); r; r = g.tryAcquire()) running.push({ left: 100, release: r });
    run(50, running.length * 1.8);
    for (const j of running) j.left -= 50;
    for (const j of running.filter((x) => x.left <= 0)) {
      j.release();
      done++;
    }
    running.splice(0, running.length, ...running.filter((x) => x.left > 0));
  }
  const average = (cpu() / 60) * 100;
  assert.ok(average <= 100 + 0.5, `average ${average.toFixed(1)} % of one core over 60 s`);
  assert.ok(average >= 90, `the budget is used, not wasted (${average.toFixed(1)} %)`);
  assert.ok(done > 300);
  assert.equal(g.status().lanes, 1, 'lanes shrank to one: two lanes overran the budget every window');
});

test('battery and a busy user hold background work to one lane; mains and an idle user give the lanes back', () => {
  const { g } = rig(0);
  g.hostMessage({ type: 'power', on_battery: true, user_idle: true });
  const a = g.tryAcquire();
  assert.ok(a);
  assert.equal(g.tryAcquire(), null);
  assert.equal(g.status().lanes, 1);
  assert.equal(g.status().power.source, 'host');
  g.hostMessage({ type: 'power', on_battery: false, user_idle: false });
  assert.equal(g.tryAcquire(), null, 'user at the keyboard: still one lane');
  g.hostMessage({ type: 'power', on_battery: false, user_idle: true });
  const b = g.tryAcquire();
  assert.ok(b, 'mains and idle: more lanes');
  assert.equal(g.status().peak_active, 2);
  a!();
  b!();
});

test('SERVICE_POWER_STATE wins over the host; malformed host messages are ignored', () => {
  const { g } = rig(0, 'battery');
  g.hostMessage({ type: 'power', on_battery: false, user_idle: true });
  assert.deepEqual(g.status().power, { on_battery: true, user_idle: true, sleeping: false, source: 'override' });
  const { g: h } = rig(0);
  h.hostMessage({ type: 'power', on_battery: 'yes', user_idle: 1 } as never);
  h.hostMessage({ type: 'nonsense' } as never);
  assert.deepEqual(h.status().power, { on_battery: false, user_idle: true, sleeping: false, source: 'default' });
  assert.equal(rig(0, 'busy').g.status().power.user_idle, false);
});

test('sleep: nothing starts, waiting units keep their place; wake: they start in order; the running one is untouched', async () => {
  const { g } = rig(0, 'battery');
  const first = g.tryAcquire()!;
  const order: string[] = [];
  const w1 = g.acquire().then((r) => (order.push('w1'), r));
  g.hostMessage({ type: 'sleep' });
  assert.equal(g.status().paused, true);
  assert.deepEqual(g.status().pause_reasons, ['sleep']);
  first();
  const w2 = g.acquire().then((r) => (order.push('w2'), r));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'asleep: a freed lane is not handed out');
  assert.equal(g.status().waiting, 2);
  g.hostMessage({ type: 'wake' });
  (await w1)();
  (await w2)();
  assert.deepEqual(order, ['w1', 'w2']);
  assert.equal(g.status().active, 0);
});

test('a waiting unit whose signal aborts leaves the line; the user pause and sleep are separate reasons', async () => {
  const { g } = rig(0, 'battery');
  const held = g.tryAcquire()!;
  const ac = new AbortController();
  const waiting = g.acquire(ac.signal);
  ac.abort(new Error('shutdown'));
  await assert.rejects(waiting, /shutdown/);
  assert.equal(g.status().waiting, 0);
  held();
  g.setPaused(true);
  g.hostMessage({ type: 'sleep' });
  g.hostMessage({ type: 'wake' });
  assert.equal(g.tryAcquire(), null, 'woken, but the user still pauses');
  g.setPaused(false);
  assert.ok(g.tryAcquire());
});

test('a release whose CPU sample ends the overdraft grants the waiting unit once (no nested grant under the loop)', async () => {
  const { g, run, idle } = rig(100);
  const a = g.tryAcquire()!;
  const b = g.tryAcquire()!;
  run(1000, 2); // overdrawn
  a();
  let granted = 0;
  const waiting = g.acquire().then((r) => {
    granted++;
    return r;
  });
  idle(5000); // paid back, but no sample has seen it yet
  b(); // its grant samples: the overdraft ends inside the grant loop
  const r = await waiting;
  assert.equal(granted, 1);
  assert.equal(g.status().active, 1);
  assert.equal(g.status().waiting, 0);
  r();
});

test('io units: the CPU budget and the lanes it took away hold cpu units only; pause and the battery cap hold both', async () => {
  const { g, run } = rig(100);
  const a = g.tryAcquire()!;
  const b = g.tryAcquire()!;
  a();
  b();
  for (let i = 0; i < 4; i++) {
    run(2000, 2); // requests burn two cores
    assert.equal(g.tryAcquire(), null); // refused for the budget: the lanes shrink
  }
  assert.equal(g.status().over_budget, true);
  assert.equal(g.status().lanes, 1);
  assert.equal(g.tryAcquire('cpu'), null, 'a cpu unit waits for the budget');
  const cpuWaiting = g.acquire(undefined, 'cpu');
  const io = [g.tryAcquire('io'), g.tryAcquire('io')];
  assert.ok(io.every(Boolean), 'io units start over budget, past the shrunk lane count, and ahead of a waiting cpu unit');
  io.push(g.tryAcquire('io'), g.tryAcquire('io'));
  assert.ok(io.every(Boolean));
  assert.equal(g.tryAcquire('io'), null, 'io units stay within the lane cap (4 on mains)');
  const ioWaiting = g.acquire(undefined, 'io');
  io[0]!();
  (await ioWaiting)();
  for (const r of io.slice(1)) r!();
  run(6000, 0); // the overdraft is paid back
  (await cpuWaiting)();

  const battery = rig(100, 'battery').g;
  const one = battery.tryAcquire('io')!;
  assert.equal(battery.tryAcquire('io'), null, 'on battery: one unit in all');
  assert.equal(battery.tryAcquire('cpu'), null);
  one();
  battery.hostMessage({ type: 'sleep' });
  assert.equal(battery.tryAcquire('io'), null, 'asleep: no io unit starts either');
});
