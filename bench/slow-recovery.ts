/**
 * Recovery after slow clients: a 100 MiB `GET /api/files/raw` at full speed,
 * on a service that has just seen 300 slowloris sockets and 100 readers
 * taking 1 KiB/s of the same file, against the same download from a fresh
 * service started beside it (anchor; the two alternate, medians). Targets:
 * the download within 10 % of the fresh service's rate, RSS back within
 * 50 MiB of where it started, and the send-buffer pool holding nothing for
 * the clients that left (GET /api/admin/status, memory section).
 *
 *   node --import tsx bench/slow-recovery.ts   (BENCH_RUNS=3, BENCH_HOLD_S=20, BENCH_SETTLE_S=12, BENCH_READERS=100, BENCH_SOCKETS=300)
 */
import { connect, type Socket } from 'node:net';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ensureBuilt, median, noise, sleep, startService, table, type Service } from './lib';
import { adminEnv, curl, mount } from './download';
import { slowloris } from './slow-clients';
import { tempDir } from '../test/helpers/tools';

const MiB = 1 << 20;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const HOLD_S = Number(process.env.BENCH_HOLD_S ?? 20);
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 12);
const READERS = Number(process.env.BENCH_READERS ?? 100);
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 300);
const BYTES = 100 * MiB;

/** `n` clients that each GET `path` and then take 1 KiB a second; `stop()` destroys them all. */
function slowReaders(port: number, path: string, token: string, n: number): { stop(): void } {
  const socks: Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = connect(port, '127.0.0.1', () => s.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n\r\n`));
    s.on('error', () => undefined);
    s.pause();
    socks.push(s);
  }
  const timer = setInterval(() => {
    for (const s of socks) s.read(1024);
  }, 1000);
  return { stop: () => (clearInterval(timer), socks.forEach((s) => s.destroy())) };
}

async function memory(svc: Service, token: string): Promise<Record<string, number>> {
  const r = await fetch(`${svc.url}/api/admin/status`, { headers: { authorization: `Bearer ${token}` } });
  return ((await r.json()) as { memory: Record<string, number> }).memory;
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-recover-');
  mkdirSync(join(files.dir, 'data'));
  const file = join(files.dir, 'data/big.bin');
  await pipeline(noise(BYTES), createWriteStream(file));
  execFileSync('sh', ['-c', 'cat "$1" > /dev/null', 'sh', file]);
  const slow = await startService(adminEnv);
  const fresh = await startService(adminEnv);
  try {
    const tokens = [await mount(slow, 'Bench', join(files.dir, 'data')), await mount(fresh, 'Bench', join(files.dir, 'data'))];
    const get = (svc: Service, token: string) => BYTES / curl(['-H', `authorization: Bearer ${token}`, `${svc.url}/api/files/raw?path=/Bench/big.bin`]) / 1e6;
    get(slow, tokens[0]); // warm-up (JIT) on both
    get(fresh, tokens[1]);
    await sleep(SETTLE_S * 1000); // the warm-up is load too: let both settle before the baseline
    const rss0 = slow.rssMb();
    const before: number[] = [];
    for (let i = 0; i < RUNS; i++) before.push(get(slow, tokens[0]));
    const rssStart = slow.rssMb();
    console.log(`slow-client phase: ${SOCKETS} slowloris sockets + ${READERS} readers at 1 KiB/s for ${HOLD_S} s ...`);
    const readers = slowReaders(slow.port, '/api/files/raw?path=/Bench/big.bin', tokens[0], READERS);
    const loris = slowloris(slow.port, SOCKETS);
    let peak = rssStart;
    const end = Date.now() + HOLD_S * 1000;
    while (Date.now() < end) (peak = Math.max(peak, slow.rssMb())), await sleep(200);
    const during = await memory(slow, tokens[0]);
    readers.stop();
    await loris; // the service closes these itself, at its header timeout
    await sleep(SETTLE_S * 1000);
    const rssGone = slow.rssMb();
    const gone = await memory(slow, tokens[0]);
    const after: number[] = [];
    const anchor: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      anchor.push(get(fresh, tokens[1]));
      after.push(get(slow, tokens[0]));
    }
    const row = (server: string, xs: number[]) => ({ server, 'MB/s (median)': median(xs).toFixed(0), runs: xs.map((x) => x.toFixed(0)).join(' ') });
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    table(`100 MiB GET /api/files/raw, ${RUNS} alternating runs (load ${load})`, [
      row('anchor: fresh service', anchor),
      row('service before the slow clients', before),
      row('service after they left', after),
    ]);
    const ratio = median(after) / median(anchor);
    console.log(`\nafter / fresh: ${(ratio * 100).toFixed(0)} % (target >= 90 %) ${ratio >= 0.9 ? 'PASS' : 'FAIL'}`);
    console.log(
      `RSS: ${rss0.toFixed(0)} MB idle, ${rssStart.toFixed(0)} MB at the start, ${peak.toFixed(0)} MB peak, ${rssGone.toFixed(0)} MB ${SETTLE_S} s after they left, ${slow.rssMb().toFixed(0)} MB at the end (target: within 50 MiB of the start) ${rssGone - rssStart <= 50 * 1.048576 ? 'PASS' : 'FAIL'}`,
    );
    console.log(`status memory during: ${JSON.stringify(during)}`);
    console.log(`status memory after:  ${JSON.stringify(gone)}`);
  } finally {
    await slow.stop();
    await fresh.stop();
    files.cleanup();
  }
}

await main();
