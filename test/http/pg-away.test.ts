// Over 60 s in CI (test-timings.json; issue 37): the database is away for PG_AWAY_SECONDS (30, kept in CI) twice under load, by design.
/**
 * A PostgreSQL that goes away under load (issue 24, "Bad input"): one
 * `service serve` process on a real cluster with a local storage, a steady
 * load of listings, single-shot uploads and queued copies, and the database
 * away for PG_AWAY_SECONDS (default 30; a developer may shorten it, CI keeps
 * 30) twice: stopped (`pg_ctl stop -m fast`: connections cut, new ones
 * refused) and hung (every cluster process SIGSTOPped: sockets stay open,
 * nothing answers).
 * - during the outage every request answers within BOUND_MS, 2xx or 503 with
 *   the envelope `database_busy` and `Retry-After`; the process never exits;
 *   the admin status route answers 503 `database_busy` too (never "all is well");
 * - once the database is back, without a restart, listings, uploads and copies
 *   succeed again within RECOVER_MS; every copy accepted (202) before or
 *   during the outage completes (none lost, none stuck running) with every
 *   file at its target; an upload that failed left no file behind.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHILD_ADMIN as ADMIN, callJson, instanceEnv, spawnServer, type ChildServer } from '../helpers/child-server';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { tempDir } from '../helpers/tools';

const skip = needPostgres();
const OUTAGE_MS = Number(process.env.PG_AWAY_SECONDS ?? 30) * 1000;
/**
 * The longest any request may take while the database is away. The pool gives up a hung statement after 6 s
 * (statement timeout 5 s + 1 s); at worst two back to back (a request's read, then its write), plus 1 s.
 */
const BOUND_MS = 13_000;
const RECOVER_MS = 10_000;
const SRC_FILES = 60;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Phase = 'before' | 'during' | 'after';
interface Outcome {
  kind: 'list' | 'upload' | 'copy' | 'status' | 'health';
  phase: Phase;
  status: number; // 0: no answer within the client's limit, or the connection failed
  error?: string;
  retryAfter: string | null;
  ms: number;
  name?: string;
  opId?: string;
}

/** Every process of the cluster (the postmaster and its children), for SIGSTOP/SIGCONT. */
function clusterPids(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

describe('a PostgreSQL that goes away under load', { skip: skip ?? false, timeout: 300_000 }, () => {
  let cluster: PgCluster;
  let srv: ChildServer;
  let token: string;
  const tmp = tempDir('filedock-pg-away-');
  const files = join(tmp.dir, 'files');
  let phase: Phase = 'before';
  const outcomes: Outcome[] = [];
  let seq = 0;

  /** One request with a client-side limit well past the bound, so a hang is seen as such. */
  const call = async (kind: Outcome['kind'], method: string, path: string, body?: BodyInit, json?: unknown, extra: Partial<Outcome> = {}): Promise<Outcome> => {
    const at = phase;
    const t0 = Date.now();
    const o: Outcome = { kind, phase: at, status: 0, retryAfter: null, ms: 0, ...extra };
    try {
      const r = await fetch(srv.url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: json !== undefined ? JSON.stringify(json) : body,
        signal: AbortSignal.timeout(BOUND_MS + 20_000),
      });
      o.status = r.status;
      o.retryAfter = r.headers.get('retry-after');
      const text = await r.text();
      const parsed = text && r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null;
      if (r.status >= 400) o.error = parsed?.error ?? `(no envelope) ${text.slice(0, 80)}`;
      if (kind === 'copy' && r.status === 202) o.opId = parsed.operation_id;
    } catch (e) {
      o.error = `no answer: ${(e as Error).message}`;
    }
    o.ms = Date.now() - t0;
    // A request that began before the outage and ended in it counts as in it.
    if (phase !== at) o.phase = 'during';
    outcomes.push(o);
    return o;
  };
  const list = () => call('list', 'GET', '/api/files/manager?path=/Files/up');
  const upload = () => {
    const name = `u${++seq}.bin`;
    const form = new FormData();
    form.append('path', '/Files/up');
    form.append('file', new Blob([randomBytes(64 * 1024)]), name);
    return call('upload', 'POST', '/api/files/upload', form, undefined, { name });
  };
  const copy = () => {
    const name = `c${++seq}`;
    return call('copy', 'POST', '/api/files/copy', undefined, { from: '/Files/src', to: `/Files/${name}` }, { name });
  };
  const status = () => call('status', 'GET', '/api/admin/status');
  const health = () => call('health', 'GET', '/api/health');

  /** Clients at work until `stop()`: two listing, one uploading, one posting a copy every 2 s. */
  const load = () => {
    let on = true;
    const loop = async (step: () => Promise<unknown>, pauseMs: number) => {
      while (on) {
        await step();
        await sleep(pauseMs);
      }
    };
    const loops = [loop(list, 50), loop(list, 80), loop(upload, 100), loop(copy, 2000)];
    return async () => {
      on = false;
      await Promise.all(loops);
    };
  };

  before(async () => {
    cluster = await startPostgres();
    const url = await cluster.createDatabase('away');
    writeFileSync(join(tmp.dir, 'key'), randomBytes(32).toString('base64'), { mode: 0o600 });
    mkdirSync(join(files, 'src'), { recursive: true });
    mkdirSync(join(files, 'up'));
    for (let i = 0; i < SRC_FILES; i++) writeFileSync(join(files, 'src', `f${i}.bin`), randomBytes(16 * 1024));
    srv = await spawnServer(instanceEnv({ url, keyFile: join(tmp.dir, 'key'), dataDir: join(tmp.dir, 'data'), files }));
    token = (await callJson(srv.url, 'POST', '/api/auth/login', undefined, ADMIN)).body.token;
    assert.ok(token, 'signed in');
    // The storage's first sync sees src before the load begins.
    for (let i = 0; i < 100; i++) {
      const r = await callJson(srv.url, 'GET', '/api/files/manager?path=/Files/src', token);
      if (r.status === 200 && r.body.entries.length === SRC_FILES) break;
      await sleep(200);
    }
  });
  after(async () => {
    await srv?.stop().catch(() => {});
    await cluster?.destroy();
    tmp.cleanup();
  });

  /** Runs the load, takes the database away with `down` for OUTAGE_MS, brings it back with `up`, checks it all. */
  const outage = async (down: () => Promise<void> | void, up: () => Promise<void> | void) => {
    outcomes.length = 0;
    phase = 'before';
    const stop = load();
    try {
      return await outageUnderLoad(down, up, stop);
    } finally {
      await stop();
    }
  };
  const outageUnderLoad = async (down: () => Promise<void> | void, up: () => Promise<void> | void, stop: () => Promise<void>) => {
    await sleep(3000);
    // One copy right at the edge: queued just before the database goes, so its run meets the outage.
    const edge = await copy();
    assert.equal(edge.status, 202, `copy at the edge: ${edge.status} ${edge.error}`);
    phase = 'during';
    await down();
    const statusDuring: Outcome[] = [];
    const t0 = Date.now();
    try {
      while (Date.now() - t0 < OUTAGE_MS) {
        await sleep(Math.min(5000, OUTAGE_MS / 3));
        statusDuring.push(await status(), await health());
        assert.equal(srv.child.exitCode, null, `the server exited during the outage:\n${srv.log().slice(-3000)}`);
      }
    } finally {
      await up();
    }
    const back = Date.now();
    phase = 'after';
    // Without a restart: a listing, an upload and a copy succeed within RECOVER_MS.
    let ok = { list: false, upload: false, copy: false };
    while (!(ok.list && ok.upload && ok.copy) && Date.now() - back < RECOVER_MS) {
      ok = {
        list: ok.list || (await list()).status === 200,
        upload: ok.upload || (await upload()).status === 200,
        copy: ok.copy || (await copy()).status === 202,
      };
      if (!(ok.list && ok.upload && ok.copy)) await sleep(200);
    }
    const recoveredMs = Date.now() - back;
    await stop();
    assert.deepEqual(ok, { list: true, upload: true, copy: true }, `served again within ${RECOVER_MS} ms of the database's return`);
    assert.equal(srv.child.exitCode, null, 'no exit');
    assert.doesNotMatch(srv.log(), /unhandled rejection/, 'no promise left unhandled');

    const during = outcomes.filter((o) => o.phase === 'during' && o.kind !== 'status' && o.kind !== 'health');
    const summary = (os: Outcome[]) => os.map((o) => `${o.kind} ${o.status} ${o.error ?? ''} ${o.ms}ms`).join('\n');
    assert.ok(during.length >= 20, `load kept up during the outage: ${during.length} requests`);
    assert.ok(
      during.some((o) => o.status === 503),
      'the outage was seen',
    );
    for (const o of during) {
      assert.ok(o.ms <= BOUND_MS, `${o.kind} answered in ${o.ms} ms (bound ${BOUND_MS}):\n${summary(during)}`);
      if (o.status < 300) continue;
      assert.equal(o.status, 503, `${o.kind}: ${o.status} ${o.error}`);
      assert.equal(o.error, 'database_busy', `${o.kind}: ${o.error}`);
      assert.ok(o.retryAfter, `${o.kind}: a Retry-After`);
    }
    // Honest status and health: refused with the same envelope, never a 200 that hides the outage.
    for (const s of statusDuring) {
      assert.ok(s.ms <= BOUND_MS, `${s.kind} answered in ${s.ms} ms`);
      assert.equal(s.status, 503, `${s.kind}: ${s.status}`);
      assert.equal(s.error, 'database_busy');
    }

    // Every copy accepted finishes: none lost, none stuck running; each target holds every file.
    const accepted = outcomes.filter((o) => o.kind === 'copy' && o.opId);
    assert.ok(
      accepted.some((o) => o.phase !== 'after'),
      'a copy was queued before or during the outage',
    );
    const deadline = Date.now() + 60_000;
    for (const o of accepted) {
      let op: { status: string; error?: unknown } | undefined;
      while (Date.now() < deadline) {
        const r = await callJson(srv.url, 'GET', `/api/files/ops/${o.opId}`, token);
        assert.equal(r.status, 200, `op ${o.opId}: ${r.status} ${JSON.stringify(r.body)}`);
        op = r.body;
        if (!['queued', 'running'].includes(op!.status)) break;
        await sleep(300);
      }
      assert.equal(op?.status, 'completed', `op ${o.opId} (${o.phase}): ${JSON.stringify(op)}`);
    }
    for (const o of accepted) assert.equal(readdirSync(join(files, o.name!)).length, SRC_FILES, `every file copied to ${o.name}`);
    // Uploads: an answered 200 is listed; a refused one left nothing, on disk or in the listing. A refusal
    // whose COMMIT was in doubt may have landed when the database woke; the gate settles it within seconds.
    const uploads = outcomes.filter((u) => u.kind === 'upload');
    let listed = new Set<string>();
    for (const until = Date.now() + 10_000; ; await sleep(300)) {
      const r = await callJson(srv.url, 'GET', '/api/files/manager?path=/Files/up', token);
      listed = new Set((r.body.entries as Array<{ name: string }>).map((e) => e.name));
      if (Date.now() > until || !uploads.some((o) => o.status !== 200 && listed.has(o.name!))) break;
    }
    for (const o of uploads) {
      if (o.status === 200) assert.ok(listed.has(o.name!), `${o.name} uploaded and listed`);
      else {
        assert.ok(!listed.has(o.name!), `${o.name} (${o.status} ${o.error}) not listed`);
        assert.ok(!existsSync(join(files, 'up', o.name!)), `${o.name} (${o.status} ${o.error}) left no file`);
      }
    }
    assert.equal((await callJson(srv.url, 'GET', '/api/admin/status', token)).status, 200, 'the status route answers again');
    assert.equal((await fetch(`${srv.url}/api/health`)).status, 200, 'the health route answers again, without a sign-in');
    return {
      during: during.length,
      refused: during.filter((o) => o.status === 503).length,
      slowestMs: Math.max(...during.map((o) => o.ms)),
      status: statusDuring.map((s) => `${s.kind} ${s.status}`).join(','),
      recoveredMs,
      copies: accepted.length,
      // Across both variants so far (the log is the process's).
      opsRunAgain: srv.log().split('the database was away, runs again').length - 1,
      uploadsTakenBack: srv.log().split('taking back').length - 1,
    };
  };

  test('stopped (pg_ctl stop -m fast) for the outage: 503s within the bound, then served again, nothing lost', async () => {
    const r = await outage(
      () => cluster.stop('fast'),
      () => cluster.start(),
    );
    console.log(`stopped: ${JSON.stringify(r)}`);
  });

  test('hung (every cluster process SIGSTOPped) for the outage: 503s within the bound, then served again, nothing lost', async () => {
    let pids: number[] = [];
    const r = await outage(
      () => {
        pids = clusterPids(cluster.dataDir);
        for (const p of pids) process.kill(p, 'SIGSTOP');
      },
      () => {
        for (const p of pids) process.kill(p, 'SIGCONT');
      },
    );
    console.log(`hung: ${JSON.stringify(r)}`);
  });
});
