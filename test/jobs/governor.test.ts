// Over 60 s in CI (test-timings.json; issue 37): the CPU cap is measured over a 60 s window; 500 thumbnail jobs around a sleep and a wake.
/**
 * The governor on a real server process (issue 23, item 1): thumbnails of
 * real images found by a sync, with battery power simulated, run one at a
 * time and the process's CPU (measured from /proc, its tools included) stays
 * at or under the budget over 60 s; and a sleep/wake in the middle of 500
 * thumbnail jobs ends with each job run exactly once (executions counted from
 * the server's own log lines).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { spawnServer, type ChildServer } from '../helpers/child-server';
import { tempDir } from '../helpers/tools';

const linux = process.platform === 'linux';
const skip = linux ? false : 'measures CPU through /proc (Linux only)';
if (!linux && (process.env.CI === 'true' || process.env.CI === '1')) throw new Error('[CI] the governor tests need Linux /proc');
const ADMIN = { email: 'admin@example.test', password: 'admin-password-1' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `count` JPEG names in `dir`, hard links to a few distinct photo-like images (each name is its own file to the catalogue). */
async function photos(dir: string, count: number, width: number, height: number): Promise<void> {
  mkdirSync(dir, { recursive: true });
  // The sources sit beside the storage folder, not in it.
  const src = `${dir}-src`;
  mkdirSync(src, { recursive: true });
  const distinct: string[] = [];
  for (let i = 0; i < 8; i++) {
    const noise = await sharp({
      create: { width: 200, height: 150, channels: 3, background: { r: 30 * i, g: 90, b: 160 }, noise: { type: 'gaussian', mean: 120, sigma: 50 } },
    })
      .png()
      .toBuffer();
    const file = join(src, `${i}.jpg`);
    await sharp(noise).resize(width, height).jpeg({ quality: 88 }).toFile(file);
    distinct.push(file);
  }
  for (let i = 0; i < count; i++) linkSync(distinct[i % distinct.length], join(dir, `photo-${String(i).padStart(5, '0')}.jpg`));
}

/** utime + stime + cutime + cstime of `pid` in seconds (every thread, and the children it reaped). */
function cpuOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ');
  return [11, 12, 13, 14].reduce((n, i) => n + Number(f[i]), 0) / 100;
}

/** CPU of the server and of every live descendant (thumbnail tools), from /proc. */
function treeCpu(pid: number): number {
  let total = cpuOf(pid);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === pid) continue;
    try {
      const f = readFileSync(`/proc/${name}/stat`, 'latin1').split(') ')[1].split(' ');
      if (Number(f[1]) === pid) total += treeCpu(Number(name)); // field 4: the parent
    } catch {
      // gone meanwhile: its time is in its parent's now
    }
  }
  return total;
}

async function adminStatus(srv: ChildServer): Promise<() => Promise<any>> {
  const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  const { token } = (await login.json()) as { token: string };
  return async () => (await (await fetch(`${srv.url}/api/admin/status`, { headers: { authorization: `Bearer ${token}` } })).json()).governor;
}

/** Thumbnail runs the server logged (debug level), by node id. */
function executions(log: string): Map<string, number> {
  const runs = new Map<string, number>();
  for (const m of log.matchAll(/"msg":"thumbnail (\d+) (ready|failed|skipped)/g)) runs.set(m[1], (runs.get(m[1]) ?? 0) + 1);
  return runs;
}

const serverEnv = (dir: string, extra: Record<string, string>) => ({
  SERVICE_DATA_DIR: join(dir, 'data'),
  SERVICE_ADMIN_EMAIL: ADMIN.email,
  SERVICE_ADMIN_PASSWORD: ADMIN.password,
  SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
  SERVICE_DEFAULT_STORAGE_PATH: join(dir, 'photos'),
  SERVICE_DEFAULT_STORAGE_NAME: 'Photos',
  ...extra,
});

const WINDOW_S = 60;
const CAP = 50;

test(`battery: a thumbnail backfill runs one at a time and the server's CPU over ${WINDOW_S} s stays at or under the ${CAP} % cap`, {
  skip,
  timeout: 240_000,
}, async () => {
  const { dir, cleanup } = tempDir('filedock-governor-');
  // More work than 60 s at half a core can finish, so the backlog never runs dry inside the window.
  await photos(join(dir, 'photos'), 4000, 2400, 1800);
  const srv = await spawnServer(serverEnv(dir, { SERVICE_POWER_STATE: 'battery', SERVICE_BACKGROUND_CPU: String(CAP), SERVICE_LOG_LEVEL: 'debug' }));
  try {
    const status = await adminStatus(srv);
    const pid = srv.child.pid!;
    // Wait until the backfill runs (the first sync found the photos and queued them).
    for (let i = 0; executions(srv.log()).size < 5; i++) {
      if (i > 1200) throw new Error(`no thumbnails after 60 s:\n${srv.log().slice(-2000)}`);
      await sleep(50);
    }
    const before = { cpu: treeCpu(pid), t: performance.now(), done: executions(srv.log()).size };
    let maxActive = 0;
    let lanes = new Set<number>();
    while (performance.now() - before.t < WINDOW_S * 1000) {
      const g = await status();
      maxActive = Math.max(maxActive, g.active);
      lanes.add(g.lanes);
      await sleep(500);
    }
    const after = { cpu: treeCpu(pid), t: performance.now(), done: executions(srv.log()).size };
    const g = await status();
    const average = ((after.cpu - before.cpu) / ((after.t - before.t) / 1000)) * 100;
    const done = after.done - before.done;
    console.log(
      `governor battery: ${average.toFixed(1)} % of one core over ${((after.t - before.t) / 1000).toFixed(1)} s (cap ${CAP} %), ${done} thumbnails, governor says ${g.cpu_percent} % over its last ${g.window_s} s`,
    );
    assert.equal(g.power.on_battery, true);
    assert.deepEqual([...lanes], [1], 'one lane on battery');
    assert.equal(g.peak_active, 1, 'never two thumbnails at once');
    assert.ok(maxActive <= 1);
    // Measured by the kernel's clock ticks (10 ms each) over a minute: no slack beyond one tick a second.
    assert.ok(average <= CAP + 1, `average CPU ${average.toFixed(1)} % over the cap of ${CAP} %`);
    assert.ok(done >= 20, `the backfill made progress under the cap (${done} thumbnails)`);
    assert.ok(g.waiting >= 0 && g.budget_percent === CAP);
  } finally {
    await srv.stop();
    cleanup();
  }
});

test('sleep and wake in the middle of 500 thumbnail jobs: nothing starts while asleep, and each job runs exactly once', {
  skip,
  timeout: 600_000,
}, async () => {
  const { dir, cleanup } = tempDir('filedock-governor-sleep-');
  await photos(join(dir, 'photos'), 500, 1600, 1200);
  const srv = await spawnServer(serverEnv(dir, { SERVICE_LOG_LEVEL: 'debug' }));
  try {
    const status = await adminStatus(srv);
    const pid = srv.child.pid!;
    for (let i = 0; executions(srv.log()).size < 100; i++) {
      if (i > 2400) throw new Error(`fewer than 100 thumbnails after 120 s:\n${srv.log().slice(-2000)}`);
      await sleep(25);
    }
    // The host reports the sleep, then the OS freezes the process with jobs in flight, and thaws it.
    srv.child.send({ type: 'sleep' });
    await sleep(50);
    process.kill(pid, 'SIGSTOP');
    await sleep(3000);
    process.kill(pid, 'SIGCONT');
    // Jobs in flight at the freeze finish; then nothing new may start until the wake.
    let g = await status();
    assert.equal(g.paused, true);
    assert.deepEqual(g.pause_reasons, ['sleep']);
    for (let i = 0; g.active > 0; i++) {
      if (i > 400) throw new Error('in-flight thumbnails did not finish after the thaw');
      await sleep(50);
      g = await status();
    }
    const asleep = executions(srv.log()).size;
    await sleep(2000);
    assert.equal(executions(srv.log()).size, asleep, 'no thumbnail started while asleep');
    assert.ok(asleep < 500, 'the sleep came in the middle of the run');
    srv.child.send({ type: 'wake' });
    // Bounded by progress, not by a speed: at CI's load the rest took over two minutes. A stall of 60 s fails.
    for (let seen = 0, at = Date.now(); ; ) {
      const n = executions(srv.log()).size;
      if (n >= 500) break;
      if (n > seen) [seen, at] = [n, Date.now()];
      else if (Date.now() - at > 60_000) throw new Error(`only ${n} of 500 thumbnails after the wake, none new for 60 s`);
      await sleep(100);
    }
    await sleep(1500); // a second run of any job would show up here
    const runs = executions(srv.log());
    assert.equal(runs.size, 500);
    const twice = [...runs].filter(([, n]) => n !== 1);
    assert.deepEqual(twice, [], 'every job ran exactly once');
    g = await status();
    assert.equal(g.paused, false);
    const cached = readdirSync(join(dir, 'data', 'cache', 'thumbs')).filter((n) => n.endsWith('.jpg'));
    assert.equal(cached.length, 500, 'every thumbnail is in the cache');
  } finally {
    await srv.stop();
    cleanup();
  }
});
