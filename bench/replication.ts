/**
 * Replication to an SFTP target (a loopback OpenSSH, `internal-sftp`) against
 * `rclone copy` to the same sshd with the same key, in the same run:
 *   a. lag: 1,000 small files written through the API (4 at a time) until
 *      every copy is on the target, vs `rclone copy` of the same files
 *      (target: ≤ 2 × rclone);
 *   b. one big file (2 GiB; BENCH_MIB to shrink): from the upload's answer
 *      until the copy is complete on the target, vs `rclone copy` of it
 *      (target: ≥ 80 % of rclone's speed);
 *   c. the primary's write latency (p50/p99 of sequential 4 KiB saves) on a
 *      storage linked to the async target vs one that is not (target: within
 *      5 %), twice: alternating blocks of 50 (the "on" block also carries its
 *      own background copies: contention included), and alternating single
 *      writes (both sides see the same copies running: the write path's own
 *      cost, i.e. the decorator's check and the enqueue).
 *
 *   npm run bench -- replication     (BENCH_RUNS=3, BENCH_FILES=1000, BENCH_MIB=2048, BENCH_WRITES=400,
 *                                     BENCH_PARTS=lag,big,latency)
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, openAsBlob, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ensureBuilt, median, noise, sleep, startService, table, type Service } from './lib';
import { adminEnv, mount } from './download';
import { startSshd, type SshdServer } from '../test/helpers/sshd';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const FILES = Number(process.env.BENCH_FILES ?? 1000);
const BYTES = Number(process.env.BENCH_MIB ?? 2048) * MiB;
const WRITES = Number(process.env.BENCH_WRITES ?? 400);
const SMALL = 4096;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'lag,big,latency').split(','));

type Api = (method: string, path: string, body?: unknown) => Promise<any>;

function client(svc: Service, token: string): Api {
  return async (method, path, body) => {
    const r = await fetch(svc.url + path, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.status === 204 ? null : r.json();
  };
}

/** `rclone copy src bench:dst` over SFTP with the sshd's client key (configured by env, no config file); seconds. */
function rcloneCopy(sshd: SshdServer, src: string, dst: string): number {
  const t0 = performance.now();
  execFileSync('rclone', ['copy', src, `bench:${dst}`, '--sftp-disable-hashcheck', '--log-level', 'ERROR'], {
    env: {
      ...process.env, RCLONE_CONFIG: '/dev/null', RCLONE_CONFIG_BENCH_TYPE: 'sftp', RCLONE_CONFIG_BENCH_HOST: sshd.host, RCLONE_CONFIG_BENCH_PORT: String(sshd.port),
      RCLONE_CONFIG_BENCH_USER: sshd.user, RCLONE_CONFIG_BENCH_KEY_FILE: sshd.clientKeyPath, RCLONE_CONFIG_BENCH_SHELL_TYPE: 'none',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return (performance.now() - t0) / 1000;
}

const count = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => !n.startsWith('.')).length : 0);

async function waitFor(what: string, ok: () => boolean, ms = 600_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(20);
  }
}

/** Runs `fn(i)` for 0..n-1, `width` at a time. */
async function pool(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await fn(next++);
  }));
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function main(): Promise<void> {
  ensureBuilt();
  const work = tempDir('filedock-bench-repl-');
  const sshd = await startSshd();
  const svc = await startService({ ...adminEnv, SERVICE_REPLICA_RETRY_BACKOFF: '1s' });
  try {
    const primary = join(work.dir, 'primary');
    const plain = join(work.dir, 'plain');
    mkdirSync(primary);
    mkdirSync(plain);
    const token = await mount(svc, 'home', primary);
    const api = client(svc, token);
    await api('POST', '/api/admin/storages', { name: 'plain', driver: 'local', config: { path: plain } });
    const targetRoot = join(sshd.dataDir, 'replica');
    mkdirSync(targetRoot);
    const target = await api('POST', '/api/admin/replication-targets', {
      name: 'sftp', driver: 'sftp', config: { host: sshd.host, port: sshd.port, user: sshd.user, private_key: sshd.clientKey, root: targetRoot },
    });
    const storages = (await api('GET', '/api/admin/storages')).storages as { id: number; name: string }[];
    await api('PATCH', `/api/admin/storages/${storages.find((s) => s.name === 'home')!.id}`, { replica_target_id: target.id });

    // The same small files on disk for rclone.
    const smallSrc = join(work.dir, 'small-src');
    mkdirSync(smallSrc);
    const body = 'x'.repeat(SMALL);
    for (let i = 0; i < FILES; i++) writeFileSync(join(smallSrc, `f${i}.txt`), body);

    const lag = { total: [] as number[], drain: [] as number[], rclone: [] as number[] };
    const big = { ours: [] as number[], rclone: [] as number[] };
    for (let run = 0; run < RUNS && (PARTS.has('lag') || PARTS.has('big')); run++) {
      // a. 1,000 small files.
      if (PARTS.has('lag')) {
      await api('POST', '/api/files/mkdir', { path: `/home/small${run}` });
      const dest = join(targetRoot, `small${run}`);
      const t0 = performance.now();
      await pool(FILES, 4, (i) => api('POST', '/api/files/save-text', { path: `/home/small${run}/f${i}.txt`, content: body }));
      const tWritten = performance.now();
      await waitFor('every small copy', () => count(dest) >= FILES);
      const tAll = performance.now();
      lag.total.push((tAll - t0) / 1000);
      lag.drain.push((tAll - tWritten) / 1000);
      lag.rclone.push(rcloneCopy(sshd, smallSrc, join(sshd.dataDir, `rclone-small${run}`)));
      }
      if (!PARTS.has('big')) continue;

      // b. one big file.
      const src = join(work.dir, `big${run}.bin`);
      await pipeline(noise(BYTES), createWriteStream(src));
      const form = new FormData();
      form.append('path', '/home');
      form.append('file', await openAsBlob(src), `big${run}.bin`);
      const up = await fetch(`${svc.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
      if (up.status !== 200) throw new Error(`upload: ${up.status} ${await up.text()}`);
      const b0 = performance.now();
      const copy = join(targetRoot, `big${run}.bin`);
      await waitFor('the big copy', () => existsSync(copy) && statSync(copy).size === BYTES);
      big.ours.push((performance.now() - b0) / 1000);
      const rdir = join(sshd.dataDir, `rclone-big${run}`);
      big.rclone.push(rcloneCopy(sshd, src, rdir));
      execFileSync('rm', ['-rf', src, copy, rdir, join(primary, `big${run}.bin`)]);
    }

    // c. write latency, linked vs not: alternating blocks of 50, then alternating single writes.
    const blocks = { on: [] as number[], off: [] as number[] };
    const single = { on: [] as number[], off: [] as number[] };
    const save = async (into: number[], path: string) => {
      const t = performance.now();
      await api('POST', '/api/files/save-text', { path, content: body });
      into.push(performance.now() - t);
    };
    if (PARTS.has('latency')) {
      for (const d of ['/home/lat', '/plain/lat', '/home/lat1', '/plain/lat1']) await api('POST', '/api/files/mkdir', { path: d });
      for (let i = 0; i < WRITES; i += 50) {
        for (let j = i; j < i + 50; j++) await save(blocks.on, `/home/lat/w${j}.txt`);
        for (let j = i; j < i + 50; j++) await save(blocks.off, `/plain/lat/w${j}.txt`);
      }
      for (let j = 0; j < WRITES; j++) {
        await save(single.on, `/home/lat1/w${j}.txt`);
        await save(single.off, `/plain/lat1/w${j}.txt`);
      }
      await waitFor('the latency copies', () => count(join(targetRoot, 'lat')) + count(join(targetRoot, 'lat1')) >= 2 * WRITES);
    }

    const s = (xs: number[]) => `${median(xs).toFixed(2)} s`;
    if (PARTS.has('lag')) table(`Replication lag: ${FILES} files of ${SMALL / 1024} KiB to SFTP (median of ${RUNS})`, [
      { what: 'Filedock: first API write → every copy on the target', time: s(lag.total), 'vs rclone': `${(median(lag.total) / median(lag.rclone)).toFixed(2)}×` },
      { what: 'Filedock: last write answered → every copy on the target', time: s(lag.drain), 'vs rclone': `${(median(lag.drain) / median(lag.rclone)).toFixed(2)}×` },
      { what: 'rclone copy (same files, same sshd)', time: s(lag.rclone), 'vs rclone': '1.00×' },
    ]);
    const mbps = (xs: number[]) => BYTES / MiB / median(xs);
    if (PARTS.has('big')) table(`Replication of one ${BYTES / MiB} MiB file to SFTP (median of ${RUNS})`, [
      { what: 'Filedock: upload answered → copy complete', time: s(big.ours), 'MiB/s': mbps(big.ours).toFixed(0), 'vs rclone': `${((mbps(big.ours) / mbps(big.rclone)) * 100).toFixed(0)} %` },
      { what: 'rclone copy', time: s(big.rclone), 'MiB/s': mbps(big.rclone).toFixed(0), 'vs rclone': '100 %' },
    ]);
    const ms = (x: number) => `${x.toFixed(2)} ms`;
    const vs = (on: number[], off: number[], p: number) => `${((pct(on, p) / pct(off, p) - 1) * 100).toFixed(1)} %`;
    if (PARTS.has('latency')) table(`Primary write latency, ${WRITES} sequential 4 KiB saves each side`, [
      ...([['blocks of 50', blocks], ['alternating writes', single]] as const).flatMap(([how, l]) => [
        { side: `on (async SFTP target), ${how}`, p50: ms(pct(l.on, 0.5)), p99: ms(pct(l.on, 0.99)), 'p50 vs off': vs(l.on, l.off, 0.5), 'p99 vs off': vs(l.on, l.off, 0.99) },
        { side: `off, ${how}`, p50: ms(pct(l.off, 0.5)), p99: ms(pct(l.off, 0.99)), 'p50 vs off': '0 %', 'p99 vs off': '0 %' },
      ]),
    ]);
  } finally {
    await svc.stop();
    await sshd.dispose();
    work.cleanup();
  }
}

await main();
