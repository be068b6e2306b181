/**
 * Where to start extraction's tools from (issue 34: listings and uploads fell to a twentieth while PDFs were
 * extracted, docs/benchmarks.md). A process holding ~300 MB of heap (a service's size) runs `pdftotext` on
 * one-page PDFs, two at a time, for BENCH_SECONDS, started (a) by spawn() on its main thread, as
 * lib/run-tool.ts did before the launcher, (b) through lib/run-tool.ts as it is (the launcher process,
 * lib/tool-launcher.ts). Meanwhile the main thread's event loop delay is sampled every 5 ms (what a request
 * would wait), and the main thread's own CPU time (/proc/self/task/<pid>/stat) is divided by the tools run:
 * what one tool call costs the thread that serves requests. Alternating, one round each per run.
 *
 *   npm run bench -- fulltext-spawn    (BENCH_RUNS=2 BENCH_SECONDS=8)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg, setPriority } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { runToolOutput } from '../server/lib/run-tool';
import { cachedCorpus } from '../test/helpers/documents';
import { table } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);

/** What the service did before the launcher: spawn on its own thread, at low priority, drain stdout. */
const TOOL = 'pdftotext'; // poppler-utils, a Debian package
const onMain = (file: string) =>
  new Promise<void>((resolve) => {
    const c = spawn(TOOL, [file, '-'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
    if (c.pid) setPriority(c.pid, 10);
    c.stdout.on('data', () => {});
    c.on('close', () => resolve());
  });
const viaLauncher = async (file: string) => {
  await runToolOutput(TOOL, [file, '-'], { signal: new AbortController().signal, maxBytes: 1 << 20 });
};

/** CPU seconds of this process's main thread (Linux). */
const mainThreadCpu = () => {
  const f = readFileSync(`/proc/self/task/${process.pid}/stat`, 'latin1').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

// Heap of a service's size: fork() copies its page tables, and a forked child shares it until exec.
const heap = Array.from({ length: 2_500_000 }, (_, i) => ({ i, s: `entry ${i}` }));

const { root, docs } = await cachedCorpus({ pdfs: 500, office: 500, scans: 0 });
const pdfs = docs.filter((d) => d.kind === 'pdf').map((d) => `${root}/${d.rel}`);
const rows: Array<Record<string, string | number>> = [];
await viaLauncher(pdfs[0]); // the launcher starts once, lazily: not part of a tool call's cost
for (let r = 0; r < RUNS; r++) {
  for (const [mode, one] of [
    ['spawn on the main thread (before)', onMain],
    ['run-tool through the launcher', viaLauncher],
  ] as const) {
    const l0 = loadavg()[0].toFixed(2);
    const lag = monitorEventLoopDelay({ resolution: 5 });
    lag.enable();
    const cpu0 = mainThreadCpu();
    const until = performance.now() + SECONDS * 1000;
    let n = 0;
    const lane = async () => {
      while (performance.now() < until) await one(pdfs[n++ % pdfs.length]);
    };
    await Promise.all([lane(), lane()]);
    const cpu = mainThreadCpu() - cpu0;
    lag.disable();
    rows.push({
      run: r + 1,
      mode,
      'PDFs/s': (n / SECONDS).toFixed(1),
      'main thread CPU ms / call': ((cpu * 1000) / n).toFixed(2),
      'loop delay p50 / p99 / max ms': `${(lag.percentile(50) / 1e6).toFixed(0)} / ${(lag.percentile(99) / 1e6).toFixed(0)} / ${(lag.max / 1e6).toFixed(0)}`,
      load: `${l0} → ${loadavg()[0].toFixed(2)}`,
    });
    console.log(JSON.stringify(rows.at(-1)));
  }
}
table(`pdftotext, two at a time, from a process holding ${Math.round(process.memoryUsage().rss / 1e6)} MB (${heap.length} objects)`, rows);
