/**
 * Big archives: a 100,000-entry ZIP (the documented maximum; ZIP64 end records,
 * as ZipWriter writes past 65,534 entries) listed through
 * `POST /api/files/archive/list` against `unzip -l` on the same file,
 * alternating, medians; the service's RSS growth over its idle RSS during a
 * listing; then an extract: how long until the 202, until the op has read
 * and vetted the directory, its writing rate over a window, and how long a
 * cancel sent while it writes and one sent while it reads the directory take
 * to end it. `unzip -q` into a folder is the extract anchor.
 * Targets: listing <= 3 s, <= 2x `unzip -l`, <= 200 MiB over idle RSS.
 *
 *   node --import tsx bench/zip-list.ts      (BENCH_RUNS=3, BENCH_ENTRIES=100000, BENCH_WRITE_S=10)
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ZipWriter } from '../server/lib/zip-writer';
import { tempDir } from '../test/helpers/tools';
import { adminEnv, mount, withRss } from './download';
import { ensureBuilt, median, sleep, startService, table, type Service } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 100_000);
const WRITE_S = Number(process.env.BENCH_WRITE_S ?? 10);

/** `n` small text files in 100 folders, deflated, written by the project's own writer. */
async function makeZip(file: string, n: number): Promise<void> {
  const zip = new ZipWriter(createWriteStream(file, { highWaterMark: 1 << 20 }));
  for (let i = 0; i < n; i++) {
    const body = Buffer.from(`entry ${i} of the big archive bench\n`.repeat(3));
    await zip.addFile(`folder-${i % 100}/file-${String(i).padStart(6, '0')}.txt`, Readable.from([body]), {
      size: body.length,
      mtime: Date.now(),
      compress: true,
    });
  }
  await zip.finish();
}

const timed = (fn: () => void): number => {
  const t0 = performance.now();
  fn();
  return (performance.now() - t0) / 1000;
};

async function api(svc: Service, token: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${svc.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

/** Polls the op until it ends; returns it and the seconds waited. */
async function opEnd(
  svc: Service,
  token: string,
  id: string,
  until = (op: any) => ['completed', 'failed', 'cancelled'].includes(op.status),
): Promise<{ op: any; s: number }> {
  const t0 = performance.now();
  for (;;) {
    const op = await (await fetch(`${svc.url}/api/files/ops/${id}`, { headers: { authorization: `Bearer ${token}` } })).json();
    if (until(op)) return { op, s: (performance.now() - t0) / 1000 };
    await sleep(20);
  }
}

/** Starts an extraction into `dest`, waits for `phase` (running, or some bytes written), cancels and times the end. */
async function cancelled(svc: Service, token: string, dest: string, phase: (op: any) => boolean): Promise<string> {
  const r = await api(svc, token, '/api/files/archive/extract', { path: '/Bench/big.zip', dest, overwrite: true });
  await opEnd(svc, token, r.body.operation_id, (op) => phase(op) || (op.status !== 'queued' && op.status !== 'running'));
  await api(svc, token, `/api/files/ops/${r.body.operation_id}/cancel`, {});
  const end = await opEnd(svc, token, r.body.operation_id);
  return `${end.op.status} after ${end.s.toFixed(2)} s (${end.op.bytes_done ?? 0} bytes written)`;
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-ziplist-');
  const data = join(files.dir, 'data');
  mkdirSync(data);
  const zipFile = join(data, 'big.zip');
  await makeZip(zipFile, ENTRIES);
  const svc = await startService(adminEnv);
  try {
    const token = await mount(svc, 'Bench', data);
    await sleep(2000);
    const idle = svc.rssMb();
    await api(svc, token, '/api/files/archive/list', { path: '/Bench/big.zip' }); // warm: page cache and code paths
    const rows: Array<Record<string, string | number>> = [];
    const cli: number[] = [];
    const ours: number[] = [];
    let growth = 0;
    for (let i = 0; i < RUNS; i++) {
      const load = loadavg()[0].toFixed(2);
      cli.push(timed(() => execFileSync('sh', ['-c', `unzip -l '${zipFile}' > /dev/null`])));
      const before = svc.rssMb();
      const got = await withRss(svc, async () => {
        const t0 = performance.now();
        const r = await api(svc, token, '/api/files/archive/list', { path: '/Bench/big.zip' });
        if (r.status !== 200 || r.body.entries.length !== ENTRIES) throw new Error(`list: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        return (performance.now() - t0) / 1000;
      });
      ours.push(got.value);
      const overIdle = before + got.growth / 1048576 - idle;
      growth = Math.max(growth, overIdle);
      rows.push({
        run: i + 1,
        'load (1 min)': load,
        'unzip -l s': cli[i].toFixed(2),
        'list route s': got.value.toFixed(2),
        ratio: (got.value / cli[i]).toFixed(2),
        'peak RSS over idle MiB': overIdle.toFixed(0),
      });
    }
    table(`Listing a ${ENTRIES.toLocaleString('en')}-entry ZIP (idle RSS ${idle.toFixed(0)} MiB)`, rows);
    console.log(
      `\nmedian: unzip -l ${median(cli).toFixed(2)} s, list route ${median(ours).toFixed(2)} s = ${(median(ours) / median(cli)).toFixed(2)}x (target <= 3 s and <= 2x); peak RSS ${growth.toFixed(0)} MiB over idle (target <= 200)`,
    );

    const unzipDir = join(files.dir, 'unzipped');
    const unzipS = timed(() => execFileSync('unzip', ['-q', '-o', zipFile, '-d', unzipDir]));
    rmSync(unzipDir, { recursive: true, force: true });
    const t0 = performance.now();
    const r = await api(svc, token, '/api/files/archive/extract', { path: '/Bench/big.zip', dest: '/Bench/out', overwrite: false });
    const accepted = (performance.now() - t0) / 1000;
    const id = r.body.operation_id;
    const first = await opEnd(svc, token, id, (op) => (op.bytes_done ?? 0) > 0 || op.status === 'failed');
    // Every entry through the write gate takes far longer than unzip's writes: a window of writing gives the rate.
    const w0 = (await opEnd(svc, token, id, () => true)).op.bytes_done;
    await sleep(WRITE_S * 1000);
    const w1 = (await opEnd(svc, token, id, () => true)).op.bytes_done;
    const entryBytes = Buffer.byteLength('entry 0 of the big archive bench\n') * 3;
    await api(svc, token, `/api/files/ops/${id}/cancel`, {});
    const writeCancel = await opEnd(svc, token, id);
    const readCancel = await cancelled(svc, token, '/Bench/out-c1', (op) => op.status === 'running');
    table(`Extracting it (load ${loadavg()[0].toFixed(2)})`, [
      { what: 'unzip -q -d (anchor), all entries', result: `${unzipS.toFixed(2)} s = ${(ENTRIES / unzipS).toFixed(0)} files/s` },
      { what: 'extract: 202 after', result: `${r.status} after ${accepted.toFixed(3)} s` },
      { what: 'directory read and vetted, first bytes written', result: `${first.s.toFixed(2)} s after the 202` },
      { what: `writing for ${WRITE_S} s`, result: `${((w1 - w0) / entryBytes / WRITE_S).toFixed(0)} files/s (write gate per file)` },
      { what: 'cancel while writing', result: `${writeCancel.op.status} after ${writeCancel.s.toFixed(2)} s` },
      { what: 'cancel once running (reading the directory)', result: readCancel },
    ]);
  } finally {
    await svc.stop();
    files.cleanup();
  }
}

await main();
