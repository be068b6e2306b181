/**
 * Replication test helpers: a primary storage with a linked target made
 * through the admin API, trees compared by sha256, and waits on the target.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from './server';

export type Tree = Record<string, string>;

/** Every file below `root` (relative path → sha256), internal folders left out unless `all`. */
export function localTree(root: string, all = false): Tree {
  const out: Tree = {};
  if (!existsSync(root)) return out;
  const walk = (dir: string, rel: string) => {
    for (const n of readdirSync(dir)) {
      if (!all && (n === '.service-trash' || n === '.versions' || n.startsWith('.~fd-') || n === '.service-staging')) continue;
      const p = join(dir, n);
      const r = rel ? `${rel}/${n}` : n;
      if (statSync(p).isDirectory()) walk(p, r);
      else out[r] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(root, '');
  return out;
}

/**
 * Polls `fn` until it returns true; an error thrown by `fn` (a file or object
 * that vanished between a listing and its read, while copies are still
 * landing) counts as "not yet". Throws after `ms`, naming the last error.
 */
export async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  let last: unknown = null;
  for (;;) {
    try {
      if (await fn()) return;
      last = null;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Writes a text file through the API (the file service, so the decorator sees it). */
export async function putText(s: TestServer, token: string, path: string, content: string): Promise<void> {
  const r = await s.api('POST', '/api/files/save-text', { token, body: { path, content } });
  if (r.status !== 200) throw new Error(`save-text ${path}: ${r.status} ${JSON.stringify(r.body)}`);
}

export async function ok<T = any>(p: Promise<{ status: number; body: T }>, status = 200): Promise<T> {
  const r = await p;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

export interface RemoteTarget {
  driver: string;
  config: Record<string, unknown>;
  /** Stops the target server (as a crash or a network drop would). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** What the target holds under its root (relative path → sha256; internal folders and markers left out). */
  tree(): Promise<Tree>;
}

const sorted = (t: Tree) => JSON.stringify(Object.entries(t).sort(([a], [b]) => (a < b ? -1 : 1)));

/**
 * The FAULTS scenario against a real target: writes, mkdirs, moves and
 * deletes replicated while it is up; `downOps` more changes while it is
 * stopped (failures logged, retried, given up); the target back, Fix, and the
 * trees identical by sha256, with append_only paths (`keep/`) still holding
 * the files deleted on the primary.
 */
export async function faultScenario(s: TestServer, token: string, primaryDir: string, target: RemoteTarget, downOps = 60): Promise<void> {
  const storage = await ok(s.api('POST', '/api/admin/storages', { token, body: { name: 'Home', driver: 'local', config: { path: primaryDir } } }));
  const t = await ok(s.api('POST', '/api/admin/replication-targets', { token, body: { name: 'backup', driver: target.driver, config: target.config } }));
  for (const [k, v] of Object.entries(target.config))
    if (/secret|password|private_key/.test(k) && v) assert.equal(t.config[k], '***', `${k} reads back masked`);
  await ok(s.api('PATCH', `/api/admin/storages/${storage.id}`, { token, body: { replica_target_id: t.id } }));
  await ok(s.api('POST', '/api/admin/replica/rules', { token, body: { path_pattern: 'Home/keep/**', mode: 'append_only', priority: 1 } }));

  const expected = (deletedKept: Tree): Tree => ({ ...localTree(primaryDir), ...deletedKept });
  const kept: Tree = {};
  const del = async (paths: string[]) => ok(s.api('POST', '/api/files/delete', { token, body: { paths } }));
  const move = async (from: string, to: string) => {
    const r = await s.api('POST', '/api/files/move', { token, body: { from, to } });
    if (r.status !== 200 && r.status !== 202) throw new Error(`move ${from}: ${r.status} ${JSON.stringify(r.body)}`);
  };

  // Up: every kind of change.
  await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: '/Home/keep' } }));
  await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: '/Home/work/sub' } }));
  for (let i = 0; i < 6; i++) await putText(s, token, `/Home/work/sub/f${i}.txt`, `file ${i}`);
  await putText(s, token, '/Home/keep/k0.txt', 'kept 0');
  await move('/Home/work/sub/f0.txt', '/Home/work/f0-moved.txt');
  await del(['/Home/work/sub/f1.txt']);
  kept['keep/k0.txt'] = localTree(primaryDir)['keep/k0.txt'];
  await del(['/Home/keep/k0.txt']);
  await until('the target to match while up', async () => sorted(await target.tree()) === sorted(expected(kept)), 30_000).catch(async (e) => {
    throw new Error(`${(e as Error).message}\ntarget:  ${sorted(await target.tree())}\nprimary: ${sorted(expected(kept))}`);
  });

  // Down: changes pile up as failures.
  await target.stop();
  for (let i = 0; i < downOps; i++) {
    const n = i % 6;
    if (n === 0)
      await putText(s, token, `/Home/down/w${i}.txt`, `down ${i}`).catch(async () => {
        await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: '/Home/down' } }));
        await putText(s, token, `/Home/down/w${i}.txt`, `down ${i}`);
      });
    else if (n === 1) await putText(s, token, `/Home/down/w${i - 1}.txt`, `rewritten ${i}`);
    else if (n === 2) await move(`/Home/down/w${i - 2}.txt`, `/Home/down/m${i}.txt`);
    else if (n === 3) await putText(s, token, `/Home/keep/d${i}.txt`, `keep ${i}`);
    else if (n === 4) await del([`/Home/work/sub/f${2 + (i % 4)}.txt`]).catch(() => undefined);
    else await putText(s, token, `/Home/down/x${i}.txt`, `x ${i}`);
  }
  // Copies fail one by one as their attempts run out: wait until a write and a move have both failed.
  let failures: any[] = [];
  await until(
    'write and move failures logged while the target is down',
    async () => {
      failures = (await ok(s.api('GET', '/api/admin/replica/failures?unresolved=true&limit=500', { token }))).failures;
      return failures.some((f: any) => f.op === 'write') && failures.some((f: any) => f.op === 'move');
    },
    30_000,
  );
  assert.ok(
    failures.every((f: any) => ['REPLICA_WRITE_FAIL', 'REPLICA_NO_WRITER'].includes(f.code)),
    JSON.stringify(failures.slice(0, 3)),
  );

  // Back: Fix repairs everything.
  await target.start();
  // The copies the queue still retries may land on their own; Fix takes the rest.
  const fix = await ok(s.api('POST', '/api/admin/replica/fix', { token }));
  assert.equal(typeof fix.queued, 'number');
  // Copies the queue had already given up on are queued again by a later Fix (at most every 5 s).
  const budget = 60_000 + downOps * 300;
  let lastFix = Date.now();
  await until(
    'every failure resolved',
    async () => {
      const c = (await ok(s.api('GET', '/api/admin/replica/failures/count', { token }))).count;
      if (c > 0 && Date.now() - lastFix > 5000) {
        lastFix = Date.now();
        await ok(s.api('POST', '/api/admin/replica/fix', { token }));
      }
      return c === 0;
    },
    budget,
  );
  // A file written to keep/ while down and never deleted is replicated too: keep/ holds the union.
  await until('identical trees by sha256', async () => sorted(await target.tree()) === sorted(expected(kept)), budget);
  const final = await target.tree();
  assert.equal(final['keep/k0.txt'], kept['keep/k0.txt'], 'append_only: a file deleted on the primary stays on the target');
  assert.equal(sorted(final), sorted(expected(kept)));
}
