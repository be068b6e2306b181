/**
 * Indexing throughput against recoll (issue 34's anchor): the text-layer part of the generated corpus
 * (PDFs and office documents: test/helpers/documents.ts `writeCorpus`), copied fresh for every run, indexed
 * by `recollindex` (a private config dir and a fresh index each run, OCR off, recoll's own defaults
 * otherwise: its threads on every core) and by ours (a local storage added to a real server, timed from its
 * creation until no file is pending, under the governor's default budget: 100 % of one core), alternating,
 * medians. CPU seconds of each side (user + system, children included) are reported beside the wall time.
 *
 *   npm run bench -- fulltext-recoll     (BENCH_PDFS=1000 BENCH_OFFICE=1000 BENCH_RUNS=3)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { TextExtractsRepo } from '../server/catalogue';
import { DEFAULT_TENANT } from '../server/db';
import { cachedCorpus } from '../test/helpers/documents';
import { startTestServer, type TestServer } from '../test/helpers/server';
import { tempDir } from '../test/helpers/tools';
import { median, sleep, table } from './lib';

const N = { pdfs: Number(process.env.BENCH_PDFS ?? 1000), office: Number(process.env.BENCH_OFFICE ?? 1000), scans: 0 };
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const FILES = N.pdfs + N.office;
const load = () => loadavg()[0].toFixed(2);

/** CPU seconds of this process and its reaped children (utime, stime, cutime, cstime of /proc/self/stat). */
function cpuSeconds(): number {
  const f = readFileSync('/proc/self/stat', 'latin1').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
}

/** A fresh copy of the corpus's text-layer folders. */
function copyOf(root: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const part of ['pdf', 'office']) spawnSync('cp', ['-r', join(root, part), dir]);
  return dir;
}

function recoll(src: string, confDir: string): { seconds: number; cpu: number; docs: number } {
  mkdirSync(confDir, { recursive: true });
  writeFileSync(join(confDir, 'recoll.conf'), `topdirs = ${src}\npdfocr = 0\nloglevel = 1\nnoaspell = 1\n`);
  const started = performance.now();
  // The shell reports its reaped children's CPU (recollindex and its filters) from its own stat.
  const r = spawnSync('sh', ['-c', `recollindex -c "${confDir}" -z >/dev/null 2>&1; echo "rc=$?"; cat /proc/$$/stat`], { encoding: 'utf8' });
  const seconds = (performance.now() - started) / 1000;
  const f = r.stdout.split(') ')[1].split(' ');
  if (!/rc=0/.test(r.stdout)) throw new Error(`recollindex failed: ${r.stdout}`);
  const q = spawnSync('recollq', ['-c', confDir, '-S', 'mtime', '-n', '0-0', '-q', 'dir:/'], { encoding: 'utf8' });
  const docs = Number(/(\d+) results/.exec(q.stdout)?.[1] ?? NaN);
  return { seconds, cpu: (Number(f[13]) + Number(f[14])) / 100, docs };
}

async function ours(s: TestServer, token: string, src: string, name: string): Promise<{ seconds: number; cpu: number }> {
  const repo = new TextExtractsRepo(s.server.db);
  const before = await repo.counts([DEFAULT_TENANT]);
  const cpu0 = cpuSeconds();
  const started = performance.now();
  const body = { rbac_enabled: false, name, driver: 'local', config: { path: src }, sync_mode: 'poll' };
  // The kept-alive connection idled through recoll's run and may be closed under the request: once more.
  const st = await s.api('POST', '/api/admin/storages', { token, body }).catch(() => s.api('POST', '/api/admin/storages', { token, body }));
  if (st.status !== 200) throw new Error(JSON.stringify(st.body));
  for (;;) {
    const c = await repo.counts([DEFAULT_TENANT]);
    if (c.failed > before.failed) throw new Error(`${c.failed - before.failed} failed`);
    if (c.done + c.skipped - before.done - before.skipped >= FILES && c.pending === 0) break;
    // Not too often: the poll runs in the server's process, so its CPU counts against the governor's budget.
    await sleep(250);
  }
  return { seconds: (performance.now() - started) / 1000, cpu: cpuSeconds() - cpu0 };
}

const { root } = await cachedCorpus(N);
const t = tempDir('filedock-bench-recoll-');
const s = await startTestServer({ SERVICE_THUMBS_ON_SYNC: '0' });
try {
  const token = await s.login();
  const rows: Array<Record<string, string | number>> = [];
  const a: number[] = [];
  const o: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const l0 = load();
    const rc = recoll(copyOf(root, join(t.dir, `r${run}`)), join(t.dir, `conf${run}`));
    const l1 = load();
    const us = await ours(s, token, copyOf(root, join(t.dir, `o${run}`)), `o${run}`);
    a.push(FILES / rc.seconds);
    o.push(FILES / us.seconds);
    rows.push({
      run: run + 1,
      'recoll files/s': a[run].toFixed(1),
      'recoll CPU s': rc.cpu.toFixed(1),
      'recoll docs': rc.docs,
      'ours files/s': o[run].toFixed(1),
      'ours CPU s': us.cpu.toFixed(1),
      'load (recoll, ours, end)': `${l0}, ${l1}, ${load()}`,
    });
    console.log(JSON.stringify(rows[run]));
  }
  table(
    `indexing ${N.pdfs} PDFs + ${N.office} office files: ours/recoll ${(median(o) / median(a)).toFixed(2)}x (medians ${median(o).toFixed(1)} / ${median(a).toFixed(1)} files/s)`,
    rows,
  );
} finally {
  await s.close();
  t.cleanup();
}
