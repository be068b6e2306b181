/**
 * Folder ZIP builds survive `kill -9` of the built service and go on from
 * their last checkpoint (lib/zip-build.ts; docs/desktop.md, "Resumable work").
 *
 * `archive.add` of 600 files × 256 KiB (text deflated, random "photos"
 * stored): killed once its journal counts ≥ 150 committed entries; after the
 * restart the op completes, the ZIP reads back entry by entry equal to the
 * sources (sha256, each name once, `unzip -t` clean), the bytes the journal
 * had committed at the kill are the final file's first bytes unchanged, and
 * the restarted server read far less than a build from zero would.
 *
 * A share link's folder ZIP, built on the first click (the folder is above
 * the warm ceiling) while that client reads slowly: killed once its sidecar
 * counts ≥ 64 entries; after the restart `zip=wait` finishes the same build
 * from its checkpoint (the server logs where it resumed), and the archive
 * served is complete and byte-exact.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { zipDigests } from '../helpers/zip-read';
import { spawnServer, type ChildServer } from '../helpers/child-server';
import { needTool, tempDir } from '../helpers/tools';

const ADMIN = { email: 'admin@example.test', password: 'admin-password-1' };
const KiB = 1024;
const MiB = 1024 * KiB;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

async function boot(data: string, env: Record<string, string> = {}): Promise<{ srv: ChildServer; api: Api }> {
  if (!existsSync(new URL('../../dist/server/cli.js', import.meta.url)))
    throw new Error('run `node scripts/build.mjs` first: this test starts the built service');
  // Text extraction off: its background reads of the 300 `.txt` sources would count against the bound on what the
  // restarted build reads (the server's own reads are all the test can measure).
  const srv = await spawnServer(
    { SERVICE_DATA_DIR: data, SERVICE_ADMIN_EMAIL: ADMIN.email, SERVICE_ADMIN_PASSWORD: ADMIN.password, SERVICE_TEXT_INDEX: 'false', ...env },
    { built: true },
  );
  const login = await (
    await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
  ).json();
  const api: Api = async (method, path, body) => {
    const headers: Record<string, string> = { authorization: `Bearer ${login.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(srv.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return { srv, api };
}

/** `n` files of 256 KiB in `dir`: even ones compressible text (`.txt`), odd ones random (`.jpg`, stored). Returns name → sha256. */
function folder(dir: string, n: number): Map<string, string> {
  mkdirSync(dir, { recursive: true });
  const out = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const name = `f${String(i).padStart(4, '0')}.${i % 2 ? 'jpg' : 'txt'}`;
    const body = i % 2 ? randomBytes(256 * KiB) : Buffer.alloc(256 * KiB, `line ${i} of a compressible file\n`);
    writeFileSync(join(dir, name), body);
    out.set(name, sha(body));
  }
  return out;
}

function expectZip(got: Map<string, string>, top: string, want: Map<string, string>): void {
  const files = [...got].filter(([, v]) => v !== 'dir');
  assert.equal(files.length, want.size, 'one entry per source file');
  for (const [name, digest] of want) assert.equal(got.get(`${top}${name}`), digest, `${top}${name} byte-exact`);
}

function unzipTest(file: string): void {
  if (needTool('unzip', 'unzip')) return;
  const out = execFileSync('unzip', ['-tq', file], { encoding: 'utf8' });
  assert.match(out, /No errors detected/);
}

function journal(data: string, opId: string): { zip: { temp: string; length: number; count: number } | null; built: boolean } {
  const db = new Database(join(data, 'filedock.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT key, value FROM op_journal WHERE op_id = ? AND key IN ('zip', 'built')").all(opId) as Array<{ key: string; value: string }>;
    const zip = rows.find((r) => r.key === 'zip')?.value;
    return { zip: zip ? JSON.parse(zip) : null, built: rows.some((r) => r.key === 'built') };
  } finally {
    db.close();
  }
}

/** Bytes a process has read through syscalls so far (`rchar` of /proc/<pid>/io). */
const bytesRead = (pid: number): number => Number(/rchar:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);

async function settle(api: Api, id: string): Promise<any> {
  for (const stop = Date.now() + 180_000; ; await sleep(100)) {
    const op = (await api('GET', `/api/files/ops/${id}`)).body;
    if (['completed', 'failed', 'cancelled'].includes(op.status)) return op;
    if (Date.now() > stop) throw new Error(`op still ${op.status}`);
  }
}

/** Waits until the catalogue holds the folder `rel` and `n` rows below it (the initial sync ran). */
async function catalogued(data: string, rel: string, n: number): Promise<void> {
  for (const stop = Date.now() + 60_000; ; await sleep(100)) {
    const db = new Database(join(data, 'filedock.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const folder = db.prepare('SELECT 1 FROM nodes WHERE path = ? AND deleted_at IS NULL').get(rel);
      const below = (db.prepare('SELECT count(*) AS n FROM nodes WHERE path LIKE ? AND deleted_at IS NULL').get(`${rel}/%`) as { n: number }).n;
      if (folder && below === n) return;
    } finally {
      db.close();
    }
    if (Date.now() > stop) throw new Error(`${rel} not catalogued`);
  }
}

describe('folder ZIP builds resume after kill -9', () => {
  const cleanups: Array<() => void> = [];
  after(() => cleanups.forEach((c) => c()));

  test('archive.add of 600 files killed after ≥ 150 committed entries finishes from its checkpoint, byte-exact', { timeout: 300_000 }, async (tc) => {
    const t = tempDir('filedock-zip-resume-');
    cleanups.push(t.cleanup);
    const data = join(t.dir, 'data');
    const a = join(t.dir, 'a');
    const want = folder(join(a, 'big'), 600);
    const sourceBytes = 600 * 256 * KiB;

    let { srv, api } = await boot(data);
    try {
      assert.equal((await api('POST', '/api/admin/storages', { name: 'A', driver: 'local', config: { path: a } })).status, 200);
      await catalogued(data, 'big', 600);
      const r = await api('POST', '/api/files/archive/add', { paths: ['/A/big'], dest: '/A/big.zip', compression: 'deflate' });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const id = r.body.operation_id;
      for (const stop = Date.now() + 120_000; (journal(data, id).zip?.count ?? 0) < 150; await sleep(5))
        if (Date.now() > stop) throw new Error('no 150 committed entries in 120 s');
      await srv.kill();
      const cut = journal(data, id);
      assert.ok(cut.zip && !cut.built, 'killed before the archive was complete');
      assert.ok(cut.zip.count >= 150 && cut.zip.count < 601, `${cut.zip.count} entries committed at the kill`);
      assert.deepEqual(readdirSync(a), ['big'], 'nothing visible at the target before the build completes');
      const prefix = readFileSync(cut.zip.temp).subarray(0, cut.zip.length);
      assert.equal(prefix.length, cut.zip.length, 'the temp file holds at least the committed bytes');

      ({ srv, api } = await boot(data));
      const pid = srv.child.pid!;
      const started = Date.now();
      const op = await settle(api, id);
      const took = Date.now() - started;
      assert.equal(op.status, 'completed', JSON.stringify(op));
      assert.equal(op.result.files, 600);
      const read = bytesRead(pid);
      const zipFile = join(a, 'big.zip');
      const final = readFileSync(zipFile);
      assert.equal(op.result.size, final.length);
      assert.ok(final.subarray(0, cut.zip.length).equals(prefix), 'the bytes committed before the kill are the first bytes of the result, unchanged');
      expectZip(await zipDigests(zipFile), 'big/', want);
      unzipTest(zipFile);
      // From zero the new process would read every source byte and then the archive once to publish it; resumed, it
      // reads the sources of the uncommitted entries only. The 32 MiB of slack (the bundle, the database, the logs: about
      // 13 MB here) is less than the ≥ 37.5 MiB of committed sources, so a build from zero cannot pass.
      const committedSources = cut.zip.count * 256 * KiB;
      const bound = sourceBytes - committedSources + final.length + 32 * MiB;
      assert.ok(read < bound, `the restarted server read ${read} bytes (bound ${bound}); from zero it reads more than ${sourceBytes + final.length}`);
      assert.deepEqual(readdirSync(join(data, 'staging', 'zip-builds')), [], 'the temp file is gone');
      assert.deepEqual(readdirSync(a).sort(), ['big', 'big.zip'], 'one archive at the target, no temp');

      // A cancelled build leaves no temp file behind.
      const again = await api('POST', '/api/files/archive/add', { paths: ['/A/big'], dest: '/A/again.zip', compression: 'store' });
      assert.equal(again.status, 202, JSON.stringify(again.body));
      const id2 = again.body.operation_id;
      for (const stop = Date.now() + 120_000; (journal(data, id2).zip?.count ?? 0) < 1; await sleep(5))
        if (Date.now() > stop) throw new Error('no checkpoint in 120 s');
      assert.ok(existsSync(journal(data, id2).zip!.temp), 'the temp file exists while the build runs');
      assert.equal((await api('POST', `/api/files/ops/${id2}/cancel`)).status, 200);
      const cancelled = await settle(api, id2);
      if (cancelled.status === 'cancelled') {
        assert.deepEqual(readdirSync(join(data, 'staging', 'zip-builds')), [], 'a cancelled build removes its temp file');
        assert.deepEqual(readdirSync(a).sort(), ['big', 'big.zip'], 'nothing published for the cancelled build');
      } else tc.diagnostic(`the second build ended ${cancelled.status} before the cancel reached it`);
      tc.diagnostic(
        `committed at the kill: ${cut.zip.count} entries, ${cut.zip.length} of ${final.length} bytes; after the restart the op took ${took} ms and the server read ${read} bytes (sources ${sourceBytes})`,
      );
    } finally {
      await srv.stop();
    }
  });

  test("a share link's folder ZIP killed mid-build goes on from its sidecar checkpoint after the restart", { timeout: 300_000 }, async (tc) => {
    const t = tempDir('filedock-sharezip-resume-');
    cleanups.push(t.cleanup);
    const data = join(t.dir, 'data');
    const a = join(t.dir, 'a');
    const want = folder(join(a, 'pics'), 240);
    // Above the warm ceiling: built on the first click, at the pace of that client.
    const env = { SERVICE_SHAREZIP_WARM_MAX_BYTES: String(MiB) };

    let { srv, api } = await boot(data, env);
    try {
      assert.equal((await api('POST', '/api/admin/storages', { name: 'A', driver: 'local', config: { path: a } })).status, 200);
      await catalogued(data, 'pics', 240);
      const share = await api('POST', '/api/files/share', { path: '/A/pics' });
      assert.equal(share.status, 200, JSON.stringify(share.body));
      const token = share.body.token;
      const zips = join(data, 'cache', 'zips');
      const sidecar = () => readdirSync(zips).find((n) => n.endsWith('.zip.part.idx'));
      const committed = () => {
        const f = sidecar();
        if (!f) return { entries: 0, length: 0 };
        const lines = readFileSync(join(zips, f), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l));
        return { entries: lines.reduce((n, l) => n + l.entries.length, 0), length: lines.at(-1)?.length ?? 0 };
      };
      // The first click: read slowly, so the build (which feeds this client) is still running at the kill.
      const res = await fetch(`${srv.url}/s/${token}`);
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      for (const stop = Date.now() + 120_000; committed().entries < 64; ) {
        const { done } = await reader.read();
        assert.equal(done, false, 'the build ended before the kill');
        await sleep(2);
        if (Date.now() > stop) throw new Error('no 64 committed entries in 120 s');
      }
      await srv.kill();
      await reader.cancel().catch(() => undefined);
      const cut = committed();
      const part = join(zips, sidecar()!.slice(0, -4));
      assert.ok(cut.entries >= 64 && cut.entries < 240, `${cut.entries} entries committed at the kill`);
      const prefix = readFileSync(part).subarray(0, cut.length);
      assert.equal(prefix.length, cut.length);

      ({ srv, api } = await boot(data, env));
      const waited = await fetch(`${srv.url}/s/${token}?zip=wait`);
      assert.equal(waited.status, 200);
      const served = Buffer.from(await waited.arrayBuffer());
      assert.match(srv.log(), new RegExp(`ZIP build resumed at entry ${cut.entries} of 240 \\(byte ${cut.length}\\)`));
      const finals = readdirSync(zips);
      assert.equal(finals.length, 1, `only the finished archive is left: ${finals}`);
      assert.match(finals[0], /^\d+-[0-9a-f]+\.zip$/);
      const cached = readFileSync(join(zips, finals[0]));
      assert.ok(served.equals(cached), 'the link serves the cached archive');
      assert.ok(cached.subarray(0, cut.length).equals(prefix), 'the committed bytes are the first bytes of the archive, unchanged');
      const file = join(t.dir, 'served.zip');
      writeFileSync(file, served);
      expectZip(await zipDigests(file), '', want);
      unzipTest(file);
      tc.diagnostic(`committed at the kill: ${cut.entries} of 240 entries, ${cut.length} of ${cached.length} bytes`);
    } finally {
      await srv.stop();
    }
  });
});
