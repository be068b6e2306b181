// Over 60 s in CI (test-timings.json; issue 37): 11 tests that each start the server process the desktop shell runs, several twice.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { tempDir } from '../test/helpers/tools';
import { ServerHost, type ServerHostOptions } from './server-host';
import { RotatingLog } from './log-file';
import { forkServer, forkStandIn, realServer, serverEnv, TEST_READY_MS } from './fixtures/server-process';
import type { ServerSnapshot } from './types';

const tmp = tempDir('filedock-host-');
after(() => tmp.cleanup());
let n = 0;
const dataDir = () => join(tmp.dir, `d${n++}`);

function host(opts: Partial<ServerHostOptions> & { extraEnv?: Record<string, string> } = {}) {
  const dir = dataDir();
  const { extraEnv, ...rest } = opts;
  const h = new ServerHost({
    fork: forkServer,
    env: () => serverEnv(dir, extraEnv),
    readyTimeoutMs: TEST_READY_MS,
    backoffBaseMs: 40,
    backoffMaxMs: 160,
    breakerCrashes: 4,
    breakerWindowMs: 60_000,
    drainTimeoutMs: 3000,
    killGraceMs: 1000,
    ...rest,
  });
  const states: ServerSnapshot[] = [];
  h.on('state', (s) => states.push(s));
  return { h, states, dir };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe(`server host against the ${realServer ? 'real server' : 'protocol stand-in'}`, () => {
  test('start waits for the ready handshake and reports the bound port; drain stops the process', async () => {
    const { h, states } = host();
    const { port, url } = await h.start();
    assert.ok(port > 0);
    assert.match(url, new RegExp(`:${port}`));
    const pid = h.snapshot().pid!;
    assert.equal(h.snapshot().status, 'running');
    const res = await fetch(`http://127.0.0.1:${port}/api/auth/me`);
    assert.equal(res.status, 401, 'the bound port answers HTTP');
    await h.stop();
    assert.equal(h.snapshot().status, 'stopped');
    assert.equal(alive(pid), false);
    assert.deepEqual(
      states.map((s) => s.status),
      ['starting', 'running', 'stopping', 'stopped'],
    );
  });

  test('a crash after a ready run restarts after the base delay (backoff resets on ready)', async () => {
    const { h, states } = host();
    await h.start();
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const pid = h.snapshot().pid!;
      process.kill(pid, 'SIGKILL');
      await once(h, 'state', { signal: AbortSignal.timeout(5000) });
      delays.push(h.snapshot().restartInMs!);
      assert.equal(h.snapshot().status, 'backoff');
      // Each restart re-binds; wait for running before the next kill.
      await h.start();
    }
    assert.deepEqual(delays, [40, 40, 40], 'each crash after a ready run starts the backoff from the base');
    assert.equal(states.filter((s) => s.status === 'running').length, 4);
    await h.stop();
  });

  test('a crash loop backs off 1x, 2x, 4x (capped) and the breaker shows the error', async () => {
    // A port held by someone else makes every start fail: a real crash loop.
    const blocker = createServer().listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const busy = (blocker.address() as { port: number }).port;
    const { h, states } = host({ extraEnv: { SERVICE_PORT: String(busy) } });
    await assert.rejects(h.start(), /stopped after 4 crashes/);
    blocker.close();
    const snap = h.snapshot();
    assert.equal(snap.status, 'error');
    assert.equal(snap.recentCrashes, 4);
    assert.deepEqual(
      states.filter((s) => s.status === 'backoff').map((s) => s.restartInMs),
      [40, 80, 160],
    );
    assert.equal(states.filter((s) => s.status === 'starting').length, 4);
  });

  test('a permanent start-up error (bad config) goes straight to error without retries', async () => {
    const { h, states } = host({ extraEnv: { SERVICE_PORT: 'not-a-port' } });
    await assert.rejects(h.start());
    assert.equal(h.snapshot().status, 'error');
    assert.equal(states.filter((s) => s.status === 'starting').length, 1);
    assert.ok(h.snapshot().error);
  });

  test('server output lands in the rotating log file', async () => {
    const log = new RotatingLog(join(tmp.dir, 'logs', 'server.log'));
    const { h } = host({
      pipeOutput: (c) => {
        if (c.stdout) log.pipe(c.stdout, '[out] ');
        if (c.stderr) log.pipe(c.stderr, '[err] ');
      },
      log: (l) => log.write(l),
    });
    await h.start();
    await h.stop();
    log.close();
    const text = readFileSync(log.path, 'utf8');
    assert.match(text, /\[host\] started server pid \d+/);
    assert.match(text, /exited with code 0/);
  });
});

describe("power and sleep reach the real server's governor", { skip: !realServer && 'needs the real server' }, () => {
  test('battery, presence and sleep are passed on, come back in the governor report, and are re-sent after a restart', async () => {
    const { h } = host();
    const reports: Array<import('./types').GovernorView | null> = [];
    h.on('governor', (g) => reports.push(g));
    const until = async (ok: (g: import('./types').GovernorView) => boolean) => {
      for (let i = 0; i < 200; i++) {
        const g = reports.at(-1);
        if (g && ok(g)) return g;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no matching governor report; last ${JSON.stringify(reports.at(-1))}`);
    };
    await h.start();
    await until((g) => g.lanes === 4 && !g.on_battery);
    h.setPower({ type: 'power', on_battery: true, user_idle: true });
    await until((g) => g.on_battery && g.lanes === 1);
    h.setPower({ type: 'sleep' });
    const asleep = await until((g) => g.paused);
    assert.deepEqual(asleep.pause_reasons, ['sleep']);
    assert.equal(asleep.lanes, 0);
    process.kill(h.snapshot().pid!, 'SIGKILL');
    await once(h, 'state');
    reports.length = 0;
    await h.start();
    const again = await until((g) => g.paused && g.on_battery);
    assert.deepEqual(again.pause_reasons, ['sleep'], 'a server restarted during sleep starts paused');
    h.setPower({ type: 'wake' });
    await until((g) => !g.paused && g.lanes === 1);
    await h.stop();
  });
});

describe('server host with a misbehaving server (stand-in)', () => {
  test('offline storages reach the tray as a storages event, and are cleared when the server exits', async () => {
    const { h } = host({ fork: forkStandIn, extraEnv: { STANDIN_OFFLINE: 'USB' } });
    const seen: unknown[] = [];
    h.on('storages', (o) => seen.push(o));
    await h.start();
    for (let i = 0; i < 50 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(seen[0], [{ name: 'USB', reason: 'volume 1234 is not mounted', unplugged: true, foreign: false }]);
    process.kill(h.snapshot().pid!, 'SIGKILL');
    await once(h, 'state');
    assert.deepEqual(seen.at(-1), [], "a crashed server's last list is not shown as current");
    await h.stop();
  });

  test('no ready message within the bound counts as a crash', async () => {
    const { h, states } = host({ fork: forkStandIn, extraEnv: { STANDIN_NEVER_READY: '1' }, readyTimeoutMs: 1500, breakerCrashes: 1 });
    await assert.rejects(h.start(), /did not start within/);
    assert.equal(states.at(-1)!.status, 'error');
  });

  test('a server that ignores drain is killed after the drain bound plus grace', async () => {
    const { h } = host({ fork: forkStandIn, extraEnv: { STANDIN_IGNORE_DRAIN: '1' } });
    await h.start();
    const pid = h.snapshot().pid!;
    const t0 = Date.now();
    await h.stop(300);
    const took = Date.now() - t0;
    assert.ok(took >= 1200 && took < 4000, `killed after ${took} ms`);
    assert.equal(alive(pid), false);
  });

  test('pause is sent when running and re-sent after a restart', async () => {
    const { h } = host({ fork: forkStandIn });
    const { port } = await h.start();
    h.setPaused(true);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await (await fetch(`http://127.0.0.1:${port}/api/standin/paused`)).json(), { paused: true });
    process.kill(h.snapshot().pid!, 'SIGKILL');
    await once(h, 'state');
    const again = await h.start();
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await (await fetch(`http://127.0.0.1:${again.port}/api/standin/paused`)).json(), { paused: true });
    await h.stop();
  });

  test('a start during a drain waits for the old process, then starts a new one', async () => {
    const { h } = host({ fork: forkStandIn, extraEnv: { STANDIN_DRAIN_MS: '200' } });
    await h.start();
    const first = h.snapshot().pid!;
    const stopping = h.stop();
    const started = h.start();
    await stopping;
    await started;
    assert.notEqual(h.snapshot().pid, first);
    assert.equal(h.snapshot().status, 'running');
    await h.stop();
  });
});
