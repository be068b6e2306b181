/**
 * The NFS gateway against the project's WebDAV gateway, in one run,
 * alternating which goes first, medians (the machine is shared: `uptime` is
 * printed). The issue's ratios come from libnfs's `nfs-cp` (C, a real client)
 * against curl, both copying between the gateway and files on tmpfs
 * (/dev/shm), so neither side pays a disk the other does not:
 *   - sequential read of a big file: `nfs-cp nfs://…/blob.bin /dev/shm/…`
 *     against `curl -o /dev/shm/… /dav/…` (target >= 0.8x);
 *   - write: `nfs-cp /dev/shm/up.bin nfs://…` (its close sends COMMIT, which
 *     publishes) against `curl -T /dev/shm/up.bin` PUT (target >= 0.6x);
 *   - READDIRPLUS of a 10,000-entry folder, every page (target <= 200 ms).
 * libnfs 4.0's nfs-cp moves 1 MiB per pread/pwrite and libnfs sends one
 * READ/WRITE of min(rtmax/wtmax, 1 MiB) for it: with this gateway's 1 MiB
 * maxima, one call in flight at a time, so the client's own time per call
 * is on the path too: its CPU (and curl's) is shown beside the service's.
 * Also shown: the small TypeScript client (1 MiB calls, 8 in flight) and
 * curl into /dev/null.
 *
 *   npm run bench -- gateway-nfs [MiB=1024] [runs=3] [--cpu-prof DIR]
 * (BENCH_MIB and BENCH_RUNS still work; `--cpu-prof DIR` runs the service
 * under `node --cpu-prof` and leaves its profile in DIR.)
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ensureBuilt, freePort, median, noise, startService, table } from './lib';
import { tempDir } from '../test/helpers/tools';
import { NFS, RpcClient, dirop, mountRoot } from '../test/helpers/nfs-client';

const MiB = 1 << 20;
const args = process.argv.slice(2);
const prof = args.indexOf('--cpu-prof');
const PROF_DIR = prof >= 0 ? args.splice(prof, 2)[1] : null;
const BYTES = Number(args[0] ?? process.env.BENCH_MIB ?? 1024) * MiB;
const RUNS = Number(args[1] ?? process.env.BENCH_RUNS ?? 3);
const ADMIN = { email: 'admin@example.test', password: 'admin-password-1' };
const INFLIGHT = 8;

const curlTime = (args: string[], out = '/dev/null') =>
  Number(execFileSync('curl', ['-s', '-f', '-o', out, '-w', '%{time_total}', ...args], { encoding: 'utf8' }));

/** Seconds `nfs-cp from to` takes (a process start and a MNT included, as for any real copy). */
function nfsCp(from: string, to: string): number {
  const t = performance.now();
  execFileSync('nfs-cp', [from, to], { stdio: ['ignore', 'ignore', 'inherit'] });
  return (performance.now() - t) / 1000;
}

/** CPU seconds (user + system) process `pid` has used so far; `children`: those of its children it has waited for. */
function cpuSeconds(pid: number | 'self', children = false): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const at = children ? 13 : 11;
  return (Number(f[at]) + Number(f[at + 1])) / 100;
}

/** Runs `count` indexed jobs with INFLIGHT at once. */
async function pipelined(count: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

async function nfsRead(c: RpcClient, fh: Buffer): Promise<number> {
  const t = performance.now();
  await pipelined(Math.ceil(BYTES / MiB), async (i) => {
    const r = await c.call(NFS, 6, (w) =>
      w
        .opaque(fh)
        .u64(i * MiB)
        .u32(MiB),
    );
    if (r.r.u32() !== 0) throw new Error('READ failed');
  });
  return (performance.now() - t) / 1000;
}

async function nfsWrite(c: RpcClient, dir: Buffer, name: string, src: string): Promise<number> {
  const fd = await open(src, 'r');
  const t = performance.now();
  const made = await c.call(NFS, 8, (w) => dirop(w, dir, name).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0));
  if (made.r.u32() !== 0) throw new Error('CREATE failed');
  made.r.u32();
  const fh = Buffer.from(made.r.opaque(64));
  // One buffer per call in flight, reused (as curl does): a fresh 1 MiB buffer costs more than sending it here.
  const free = Array.from({ length: INFLIGHT }, () => Buffer.allocUnsafe(MiB));
  await pipelined(Math.ceil(BYTES / MiB), async (i) => {
    const { buffer, bytesRead } = await fd.read(free.pop()!, 0, MiB, i * MiB);
    const r = await c.call(
      NFS,
      7,
      (w) =>
        w
          .opaque(fh)
          .u64(i * MiB)
          .u32(bytesRead)
          .u32(0),
      3,
      buffer.subarray(0, bytesRead),
    );
    if (r.r.u32() !== 0) throw new Error('WRITE failed');
    free.push(buffer);
  });
  const done = await c.call(NFS, 21, (w) => w.opaque(fh).u64(0).u32(0));
  if (done.r.u32() !== 0) throw new Error('COMMIT failed');
  await fd.close();
  return (performance.now() - t) / 1000;
}

async function readdirplus(c: RpcClient, dir: Buffer): Promise<{ ms: number; entries: number }> {
  const t = performance.now();
  let cookie = 0;
  let verf = Buffer.alloc(8);
  let entries = 0;
  for (;;) {
    const r = (
      await c.call(NFS, 17, (w) =>
        w
          .opaque(dir)
          .u64(cookie)
          .fixed(verf)
          .u32(64 * 1024)
          .u32(1 << 20),
      )
    ).r;
    if (r.u32() !== 0) throw new Error('READDIRPLUS failed');
    if (r.bool()) r.fixed(84);
    verf = Buffer.from(r.fixed(8));
    while (r.bool()) {
      r.u64();
      r.string(255);
      cookie = r.u64();
      if (r.bool()) r.fixed(84);
      if (r.bool()) r.opaque(64);
      entries++;
    }
    if (r.bool()) break;
  }
  return { ms: performance.now() - t, entries };
}

async function main(): Promise<void> {
  ensureBuilt();
  const t = tempDir('filedock-bench-nfs-');
  // The copies' other end, in memory for both doors.
  const shm = mkdtempSync('/dev/shm/filedock-bench-nfs-');
  const files = join(t.dir, 'files');
  mkdirSync(join(files, 'ten'), { recursive: true });
  mkdirSync(join(files, 'up'), { recursive: true });
  for (let i = 0; i < 10_000; i++) writeFileSync(join(files, 'ten', `file-${String(i).padStart(5, '0')}.txt`), 'x');
  await pipeline(noise(BYTES), createWriteStream(join(files, 'blob.bin')));
  const upSrc = join(shm, 'up.bin');
  await pipeline(noise(BYTES), createWriteStream(upSrc));
  const nfsPort = await freePort();
  const svc = await startService(
    { SERVICE_ADMIN_EMAIL: ADMIN.email, SERVICE_ADMIN_PASSWORD: ADMIN.password, SERVICE_NFS_LISTEN: `127.0.0.1:${nfsPort}` },
    PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROF_DIR] : [],
  );
  const login = await (
    await fetch(`${svc.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
  ).json();
  const auth = { 'content-type': 'application/json', authorization: `Bearer ${login.token}` };
  await fetch(`${svc.url}/api/admin/storages`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'Box', driver: 'local', config: { path: files } }),
  });
  const me = await (await fetch(`${svc.url}/api/auth/me`, { headers: auth })).json();
  const ex = await fetch(`${svc.url}/api/admin/gateways/nfs/exports`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ path: '/Box', clients: '127.0.0.1', user_id: me.user?.id ?? me.id }),
  });
  if (ex.status !== 201) throw new Error(`export: ${ex.status} ${await ex.text()}`);
  for (let i = 0; i < 600; i++) {
    const l = await fetch(`${svc.url}/api/files/manager?path=/Box/ten&limit=1`, { headers: auth });
    if (l.status === 200 && ((await l.json()) as { total: number }).total >= 10_000) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const c = await RpcClient.open(nfsPort);
  const root = await mountRoot(c, '/Box');
  const look = async (dir: Buffer, name: string) => {
    const r = (await c.call(NFS, 3, (w) => dirop(w, dir, name))).r;
    if (r.u32() !== 0) throw new Error(`LOOKUP ${name}`);
    return Buffer.from(r.opaque(64));
  };
  const blob = await look(root, 'blob.bin');
  const up = await look(root, 'up');
  const ten = await look(root, 'ten');
  // The page cache treated alike: the file served is read once before either door reads it.
  execFileSync('sh', ['-c', 'cat "$1" > /dev/null', 'sh', join(files, 'blob.bin')]);
  const nfsUrl = (path: string) => `nfs://127.0.0.1/Box${path}?nfsport=${nfsPort}&mountport=${nfsPort}&version=3`;
  const sink = join(shm, 'sink.bin');
  const davUrl = (path: string) => `${svc.url}/dav/Box${path}`;
  const user = `${ADMIN.email}:${ADMIN.password}`;
  // Each door's first request pays for loading its code and checking the password: not timed.
  nfsCp(nfsUrl('/ten/file-00000.txt'), sink);
  rmSync(sink);
  curlTime(['-u', user, davUrl('/ten/file-00000.txt')]);
  const rows = {
    nfsRead: [] as number[],
    davGet: [] as number[],
    davGetNull: [] as number[],
    nfsWrite: [] as number[],
    davPut: [] as number[],
    jsRead: [] as number[],
    jsWrite: [] as number[],
    readdir: [] as number[],
  };
  /** Service CPU seconds per transfer, by door; the client's (nfs-cp, curl) too: with one call in flight, its time is on the path. */
  const cpu = { nfsRead: [] as number[], davGet: [] as number[], nfsWrite: [] as number[], davPut: [] as number[] };
  const clientCpu = { nfsRead: [] as number[], davGet: [] as number[], nfsWrite: [] as number[], davPut: [] as number[] };
  const timed = (key: keyof typeof cpu, job: () => number) => {
    rmSync(sink, { force: true });
    const before = cpuSeconds(svc.proc.pid!);
    const clientBefore = cpuSeconds('self', true);
    rows[key].push(job());
    cpu[key].push(cpuSeconds(svc.proc.pid!) - before);
    clientCpu[key].push(cpuSeconds('self', true) - clientBefore);
  };
  let entries = 0;
  const loads: string[] = [];
  for (let run = 0; run < RUNS; run++) {
    loads.push(
      execFileSync('uptime', { encoding: 'utf8' })
        .trim()
        .replace(/.*load average: /, ''),
    );
    const reads = [
      () => timed('nfsRead', () => nfsCp(nfsUrl('/blob.bin'), sink)),
      () => timed('davGet', () => curlTime(['-u', user, davUrl('/blob.bin')], sink)),
    ];
    const writes = [
      () => timed('nfsWrite', () => nfsCp(upSrc, nfsUrl(`/up/nfs-${run}.bin`))),
      () => timed('davPut', () => curlTime(['-u', user, '-T', upSrc, davUrl(`/up/dav-${run}.bin`)])),
    ];
    // Odd runs let WebDAV go first.
    if (run % 2) reads.reverse(), writes.reverse();
    for (const f of [...reads, ...writes]) f();
    rows.davGetNull.push(curlTime(['-u', user, davUrl('/blob.bin')]));
    rows.jsRead.push(await nfsRead(c, blob));
    rows.jsWrite.push(await nfsWrite(c, up, `js-${run}.bin`, upSrc));
    const d = await readdirplus(c, ten);
    rows.readdir.push(d.ms);
    entries = d.entries;
  }
  rmSync(sink, { force: true });
  const mbps = (s: number) => (BYTES / MiB / s).toFixed(0);
  const ratio = (nfs: number[], dav: number[]) => (median(dav) / median(nfs)).toFixed(2);
  const cpuOf = (xs: number[]) => `${median(xs).toFixed(2)} s`;
  /** One transfer row: NFS against WebDAV, the ratio, the issue's target and the service's and clients' CPU where measured. */
  const row = (what: string, nfs: number[], dav: number[], target = '', serviceCpu = '', clientsCpu = '') => ({
    what,
    'NFS MB/s': mbps(median(nfs)),
    'WebDAV MB/s': mbps(median(dav)),
    ratio: ratio(nfs, dav),
    target,
    'service CPU NFS / WebDAV': serviceCpu,
    'client CPU nfs-cp / curl': clientsCpu,
  });
  table(`NFS gateway vs WebDAV gateway, ${BYTES / MiB} MiB, medians of ${RUNS} (load ${loads.join(' | ')})`, [
    row(
      'read, nfs-cp vs curl (to tmpfs)',
      rows.nfsRead,
      rows.davGet,
      '>= 0.8',
      `${cpuOf(cpu.nfsRead)} / ${cpuOf(cpu.davGet)}`,
      `${cpuOf(clientCpu.nfsRead)} / ${cpuOf(clientCpu.davGet)}`,
    ),
    row(
      'write, nfs-cp vs curl -T (COMMIT = published)',
      rows.nfsWrite,
      rows.davPut,
      '>= 0.6',
      `${cpuOf(cpu.nfsWrite)} / ${cpuOf(cpu.davPut)}`,
      `${cpuOf(clientCpu.nfsWrite)} / ${cpuOf(clientCpu.davPut)}`,
    ),
    row('read, TS client (8 in flight) vs curl to /dev/null', rows.jsRead, rows.davGetNull),
    row('write, TS client (8 in flight) vs curl -T', rows.jsWrite, rows.davPut),
    {
      what: `READDIRPLUS ${entries} entries`,
      'NFS MB/s': `${median(rows.readdir).toFixed(0)} ms`,
      'WebDAV MB/s': '',
      ratio: '',
      target: '<= 200 ms',
      'service CPU NFS / WebDAV': '',
      'client CPU nfs-cp / curl': '',
    },
  ]);
  const perCall = (xs: number[]) => ((median(xs) / (BYTES / MiB)) * 1000).toFixed(2);
  console.log(
    `nfs-cp read, per 1 MiB READ (one in flight): ${perCall(rows.nfsRead)} ms round trip, of it ${perCall(clientCpu.nfsRead)} ms the client's own CPU (medians)`,
  );
  console.log(`runs (s): ${JSON.stringify(Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, v.map((x) => +x.toFixed(3))])))}`);
  c.close();
  await svc.stop();
  t.cleanup();
  rmSync(shm, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
