// Over 60 s in CI (test-timings.json; issue 37): libnfs copies 1,000 files (NFS_TEST_FILES) in and out through one mount, nfs-cp 60 (NFS_CP_FILES).
/**
 * The NFS gateway on a real server with real clients: libnfs's `nfs-ls`,
 * `nfs-cp` and `nfs-cat` (Debian libnfs-utils) mount an export through the
 * one port (MOUNT and NFS), list, and copy a 1,000-file tree in and out byte
 * for byte (libnfs through one mount; nfs-cp per file for a smaller one); renames and deletes are seen through the HTTP API at once; a
 * file written over NFS is listed only once committed (a raw RPC client).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { NFS, RpcClient, dirop, mountRoot } from '../helpers/nfs-client';

const run = promisify(execFile);
const skip = needTool('nfs-ls', 'libnfs-utils') ?? needTool('python3', 'python3');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** nfs-cp processes at once: more only queue for the 2 cores (and each mounts anew). */
const CP_AT_ONCE = Number(process.env.NFS_CP_AT_ONCE ?? 8);
/** Copies a tree through one libnfs mount (python3 and libnfs13 through ctypes). */
const TREE = fileURLToPath(new URL('../helpers/libnfs-tree.py', import.meta.url));

/** Runs `jobs` with at most `n` at once. */
async function limited<T>(n: number, jobs: Array<() => Promise<T>>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]();
      }
    }),
  );
  return out;
}

async function until(what: string, ok: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('NFS gateway with libnfs clients', { skip: skip ?? false }, () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  let admin: string;
  let port: number;
  const url = (path: string, exp = '/Box') => `nfs://127.0.0.1${exp}${path}?nfsport=${port}&mountport=${port}&version=3`;
  const names = async (path: string) =>
    ((await s.api('GET', `/api/files/manager?path=${encodeURIComponent(path)}`, { token: admin })).body.entries ?? []).map((e: { name: string }) => e.name);

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-gw-nfs-'));
    mkdirSync(join(root, 'docs/sub'), { recursive: true });
    writeFileSync(join(root, 'docs/a.txt'), 'hello');
    s = await startTestServer({ SERVICE_NFS_LISTEN: '127.0.0.1:0' });
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } }))
        .status,
      200,
    );
    const me = (await s.api('GET', '/api/auth/me', { token: admin })).body;
    const r = await s.api('POST', '/api/admin/gateways/nfs/exports', {
      token: admin,
      body: { path: '/Box', clients: '127.0.0.1/32, ::1', user_id: me.user?.id ?? me.id },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const g = s.server.services.gateways.registry.status().gateways.find((x) => x.protocol === 'nfs')!;
    port = Number(g.listen!.split(':').at(-1));
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  test('nfs-ls lists the export and a folder in it; nfs-cat reads a file', async () => {
    const top = await run('nfs-ls', [url('')]);
    assert.match(top.stdout, /^d.* docs$/m);
    const r = await run('nfs-ls', [url('/docs')]);
    assert.match(r.stdout, /^-rw-r--r-- .* 5 a\.txt$/m);
    assert.match(r.stdout, /^d.* sub$/m);
    assert.equal((await run('nfs-cat', [url('/docs/a.txt')])).stdout, 'hello');
  });

  /** A tree of `count` files in ten folders (a seventh of them 300 KB, the rest up to 5 KB) under a new local folder. */
  const localTree = (count: number) => {
    const t = tempDir('filedock-nfs-local-');
    const files = Array.from({ length: count }, (_, i) => ({
      name: `d${i % 10}/f${i}.bin`,
      body: randomBytes(i % 7 === 0 ? 300_000 : 1 + ((i * 37) % 5000)),
    }));
    for (let i = 0; i < 10; i++) mkdirSync(join(t.dir, 'in', `d${i}`), { recursive: true });
    for (const f of files) writeFileSync(join(t.dir, 'in', f.name), f.body);
    return { ...t, files };
  };
  const published = (folder: string, files: Array<{ name: string; body: Buffer }>) =>
    until(
      'every file published',
      () => files.every((f) => existsSync(join(root, folder, f.name)) && readFileSync(join(root, folder, f.name)).length === f.body.length),
      120_000,
    );
  const sameBytes = (dir: string, files: Array<{ name: string; body: Buffer }>) => {
    for (const f of files) assert.equal(sha(readFileSync(join(dir, f.name))), sha(f.body), f.name);
  };

  // The 1,000-file tree, as a mounted client copies it: libnfs (the library behind nfs-cp) through one
  // mount and one connection (test/helpers/libnfs-tree.py), every file CREATE, WRITE, COMMIT at close.
  test('a tree of 1,000 files copied in and out through one libnfs mount, compared by sha256', { timeout: 900_000 }, async () => {
    const { dir: local, cleanup: done, files } = localTree(Number(process.env.NFS_TEST_FILES ?? 1000));
    mkdirSync(join(root, 'mounted'));
    await until('the folder catalogued', async () => (await names('/Box')).includes('mounted'));
    const list = files.map((f) => f.name).join('\n');
    const tree = (mode: 'put' | 'get', dir: string) =>
      new Promise<{ files: number; bytes: number; ms: number }>((resolve, reject) => {
        const child = execFile('python3', [TREE, mode, url('/mounted'), dir], { maxBuffer: 1 << 20 }, (err, out) =>
          err ? reject(err) : resolve(JSON.parse(out)),
        );
        child.stdin!.end(list);
      });
    const put = await tree('put', join(local, 'in'));
    assert.equal(put.files, files.length);
    assert.equal(
      put.bytes,
      files.reduce((n, f) => n + f.body.length, 0),
    );
    await published('mounted', files);
    sameBytes(join(root, 'mounted'), files);
    const listed = await names('/Box/mounted/d3');
    assert.equal(listed.length, files.filter((f) => f.name.startsWith('d3/')).length, 'every file of a folder listed by the HTTP API');
    const get = await tree('get', join(local, 'out'));
    console.log(`# ${files.length} files through one mount: in ${put.ms} ms, out ${get.ms} ms`);
    sameBytes(join(local, 'out'), files);
    done();
  });

  // nfs-cp mounts anew for every file: a client process per file, fewer files (each one costs ~0.1-2 s here).
  test('files copied in with nfs-cp and out again (one process per file), compared by sha256', { timeout: 600_000 }, async () => {
    const { dir: local, cleanup: done, files } = localTree(Number(process.env.NFS_CP_FILES ?? 60));
    for (let i = 0; i < 10; i++) mkdirSync(join(local, 'out', `d${i}`), { recursive: true });
    // The folders first (libnfs's nfs-cp copies files only).
    mkdirSync(join(root, 'tree'));
    const t0 = Date.now();
    await until('the tree folder catalogued', async () => (await names('/Box')).includes('tree'));
    const c = await RpcClient.open(port);
    const rootFh = await mountRoot(c, '/Box/tree');
    for (let i = 0; i < 10; i++) assert.equal(await mkdir(c, rootFh, `d${i}`), 0);
    await limited(
      CP_AT_ONCE,
      files.map((f) => () => run('nfs-cp', [join(local, 'in', f.name), url(`/tree/${f.name}`)])),
    );
    const copiedIn = Date.now() - t0;
    // Published at COMMIT or after the quiet period: wait for every file on the disk.
    await published('tree', files);
    sameBytes(join(root, 'tree'), files);
    const t1 = Date.now();
    await limited(
      CP_AT_ONCE,
      files.map((f) => () => run('nfs-cp', [url(`/tree/${f.name}`), join(local, 'out', f.name)])),
    );
    console.log(`# ${files.length} files with nfs-cp: in ${copiedIn} ms, out ${Date.now() - t1} ms`);
    sameBytes(join(local, 'out'), files);
    c.close();
    done();
  });

  test('a file written over NFS is listed only once committed; rename and delete are seen through the HTTP API at once', async () => {
    const c = await RpcClient.open(port);
    const docs = await mountRoot(c, '/Box/docs');
    const made = await c.call(NFS, 8, (w) => dirop(w, docs, 'late.bin').u32(1).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0));
    assert.equal(made.accept, 0);
    assert.equal(made.r.u32(), 0, 'CREATE ok');
    assert.equal(made.r.u32(), 1);
    const fh = Buffer.from(made.r.opaque(64));
    const body = randomBytes(200_000);
    for (let at = 0; at < body.length; at += 65536) {
      const w = await c.call(NFS, 7, (x) =>
        x
          .opaque(fh)
          .u64(at)
          .u32(Math.min(65536, body.length - at))
          .u32(0)
          .opaque(body.subarray(at, at + 65536)),
      );
      assert.equal(w.r.u32(), 0, 'WRITE ok');
    }
    assert.ok(!(await names('/Box/docs')).includes('late.bin'), 'not listed before COMMIT');
    assert.ok(!existsSync(join(root, 'docs/late.bin')));
    const commit = await c.call(NFS, 21, (x) => x.opaque(fh).u64(0).u32(0));
    assert.equal(commit.r.u32(), 0, 'COMMIT ok');
    assert.ok((await names('/Box/docs')).includes('late.bin'), 'listed once committed');
    assert.ok(readFileSync(join(root, 'docs/late.bin')).equals(body));
    const audit = (await s.api('GET', '/api/admin/audit?action=file.upload', { token: admin })).body.events as Array<Record<string, unknown>>;
    const upload = audit.find((e) => JSON.stringify(e).includes('late.bin'));
    assert.equal(upload?.ua, 'nfs', 'the upload is audited as an NFS one');
    // The handle made at CREATE still names the file, published now.
    const ga = await c.call(NFS, 1, (x) => x.opaque(fh));
    assert.equal(ga.r.u32(), 0);
    const ren = await c.call(NFS, 14, (x) => dirop(dirop(x, docs, 'late.bin'), docs, 'renamed.bin'));
    assert.equal(ren.r.u32(), 0, 'RENAME ok');
    const after = await names('/Box/docs');
    assert.ok(after.includes('renamed.bin') && !after.includes('late.bin'), 'the rename is seen at once');
    // Handles are node ids: the one from before the rename still works.
    assert.equal((await c.call(NFS, 1, (x) => x.opaque(fh))).r.u32(), 0, 'the handle survives the rename');
    const rm = await c.call(NFS, 12, (x) => dirop(x, docs, 'renamed.bin'));
    assert.equal(rm.r.u32(), 0, 'REMOVE ok');
    assert.ok(!(await names('/Box/docs')).includes('renamed.bin'), 'the delete is seen at once');
    assert.equal((await c.call(NFS, 1, (x) => x.opaque(fh))).r.u32(), 70, 'a deleted node → NFS3ERR_STALE');
    c.close();
  });
});

async function mkdir(c: RpcClient, dir: Buffer, name: string): Promise<number> {
  const r = await c.call(NFS, 9, (w) => dirop(w, dir, name).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0));
  return r.r.u32();
}
