/**
 * Where to start extraction's tools from (issue 34: listings and uploads fell to a twentieth while PDFs were
 * extracted, docs/benchmarks.md). A process holding ~300 MB of heap (a service's size) runs `pdftotext` on
 * one-page PDFs, two at a time, for BENCH_SECONDS, started (a) by spawn() on its main thread, as
 * lib/run-tool.ts does, (b) from a worker thread, (c) by a small long-lived launcher process (a Node child
 * with no heap to speak of, asked over IPC). Meanwhile the main thread's event loop delay is sampled every
 * 5 ms: what a request would wait. Alternating, one round each per run.
 *
 *   npm run bench -- fulltext-spawn    (BENCH_RUNS=2 BENCH_SECONDS=8)
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { cachedCorpus } from '../test/helpers/documents';
import { table } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);

// What a tool run is in every mode: spawn, drain stdout, resolve on close.
const RUN_ONE = `(bin, args) => new Promise((resolve) => {
  const c = spawn(bin, args, { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  let n = 0;
  c.stdout.on('data', (d) => (n += d.length));
  c.on('close', () => resolve(n));
})`;

type Runner = { run(file: string): Promise<number>; close(): void };

const onMain = (): Runner => {
  const one = new Function('spawn', `return ${RUN_ONE}`)(spawn) as (b: string, a: string[]) => Promise<number>;
  return { run: (f) => one('pdftotext', [f, '-']), close: () => {} };
};

/** A tool runner on the other end of a message channel (a worker thread or a launcher process). */
function remote(send: (m: unknown) => void, on: (fn: (m: { id: number; n: number }) => void) => void, close: () => void): Runner {
  const waiting = new Map<number, (n: number) => void>();
  let id = 0;
  on((m) => (waiting.get(m.id)?.(m.n), waiting.delete(m.id)));
  return {
    run: (f) => new Promise((r) => (waiting.set(++id, r), send({ id, bin: 'pdftotext', args: [f, '-'] }))),
    close,
  };
}

const body = (recv: string, reply: string) => `const { spawn } = require('node:child_process');
const one = ${RUN_ONE};
${recv}(async (m) => ${reply}({ id: m.id, n: await one(m.bin, m.args) }));`;

const inWorker = (): Runner => {
  const w = new Worker(
    body(
      "require('node:worker_threads').parentPort.on.bind(require('node:worker_threads').parentPort, 'message')",
      "require('node:worker_threads').parentPort.postMessage",
    ),
    { eval: true },
  );
  return remote(
    (m) => w.postMessage(m),
    (fn) => w.on('message', fn),
    () => void w.terminate(),
  );
};

const inLauncher = (): Runner => {
  const p = spawn(process.execPath, ['-e', body("process.on.bind(process, 'message')", 'process.send.bind(process)')], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return remote(
    (m) => p.send(m as object),
    (fn) => p.on('message', fn as (m: unknown) => void),
    () => p.kill(),
  );
};

// Heap of a service's size: fork() copies its page tables, and a forked child shares it until exec.
const heap = Array.from({ length: 2_500_000 }, (_, i) => ({ i, s: `entry ${i}` }));

const { root, docs } = await cachedCorpus({ pdfs: 500, office: 500, scans: 0 });
const pdfs = docs.filter((d) => d.kind === 'pdf').map((d) => `${root}/${d.rel}`);
const rows: Array<Record<string, string | number>> = [];
for (let r = 0; r < RUNS; r++) {
  for (const [mode, make] of [
    ['spawn on the main thread', onMain],
    ['spawn in a worker thread', inWorker],
    ['a launcher process', inLauncher],
  ] as const) {
    const runner = make();
    const l0 = loadavg()[0].toFixed(2);
    const lag = monitorEventLoopDelay({ resolution: 5 });
    lag.enable();
    const until = performance.now() + SECONDS * 1000;
    let n = 0;
    const lane = async () => {
      while (performance.now() < until) await runner.run(pdfs[n++ % pdfs.length]);
    };
    await Promise.all([lane(), lane()]);
    lag.disable();
    runner.close();
    rows.push({
      run: r + 1,
      mode,
      'PDFs/s': (n / SECONDS).toFixed(1),
      'loop delay p50 / p99 / max ms': `${(lag.percentile(50) / 1e6).toFixed(0)} / ${(lag.percentile(99) / 1e6).toFixed(0)} / ${(lag.max / 1e6).toFixed(0)}`,
      load: `${l0} → ${loadavg()[0].toFixed(2)}`,
    });
    console.log(JSON.stringify(rows.at(-1)));
  }
}
table(`pdftotext, two at a time, from a process holding ${Math.round(process.memoryUsage().rss / 1e6)} MB (${heap.length} objects)`, rows);
