/**
 * What resumable ZIP builds cost (lib/zip-build.ts; docs/desktop.md,
 * "Resumable work"), measured in-process on real files and the real stores:
 *
 * 1. Journal cost: a folder of 10,000 small files (4 KiB; text deflated,
 *    random stored) zipped without checkpoints, with the default policy into
 *    an op's journal (SQLite, as `archive.add`) and into a sidecar (as share
 *    ZIPs), alternating, medians; plus a checkpoint after every entry on the
 *    first 1,000 files (what "per file" would cost).
 * 2. Resume overhead: 600 × 256 KiB cut at entry 300; resuming (load the
 *    checkpoint, cut the file, go on, finish) against a build from zero of
 *    the same 300 remaining entries.
 *
 *   npm run bench -- zip-resume        (BENCH_RUNS=3, BENCH_SMALL=10000)
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { journalStore } from '../server/archives';
import { DEFAULT_TENANT, openDatabase } from '../server/db';
import { JobQueue } from '../server/jobs';
import { Journals } from '../server/jobs/journal';
import { DEFAULT_POLICY, SidecarStore, ZipFileBuild, entryKey, type CommitPolicy, type ZipBuildStore } from '../server/lib/zip-build';
import { tempDir } from '../test/helpers/tools';
import { median, table } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SMALL = Number(process.env.BENCH_SMALL ?? 10_000);

interface Src {
  path: string;
  name: string;
  size: number;
  mtime: number;
}

function makeFolder(dir: string, n: number, size: number): Src[] {
  mkdirSync(dir, { recursive: true });
  const out: Src[] = [];
  for (let i = 0; i < n; i++) {
    const name = `f${String(i).padStart(5, '0')}.${i % 2 ? 'jpg' : 'txt'}`;
    const path = join(dir, name);
    writeFileSync(path, i % 2 ? randomBytes(size) : Buffer.alloc(size, `row ${i},alpha,beta,${i * 7}\n`));
    const st = statSync(path);
    out.push({ path, name, size: st.size, mtime: st.mtimeMs });
  }
  return out;
}

const keyOf = (s: Src) => entryKey(s.name, 'file', s.size, s.mtime);

interface Run {
  ms: number;
  openMs: number;
  resumed: number;
  stats: ZipFileBuild['stats'];
}

async function build(temp: string, list: Src[], store: ZipBuildStore | null, policy: CommitPolicy | null, from = 0): Promise<Run> {
  const t0 = performance.now();
  const b = await ZipFileBuild.open(temp, store, list.map(keyOf), { policy });
  const openMs = performance.now() - t0;
  for (const s of list.slice(from || b.resumed.entries))
    await b.addFile(keyOf(s), s.name, createReadStream(s.path), { size: s.size, mtime: s.mtime, compress: s.name.endsWith('.txt') });
  await b.finish();
  return { ms: performance.now() - t0, openMs, resumed: b.resumed.entries, stats: b.stats };
}

async function main(): Promise<void> {
  const t = tempDir('filedock-bench-zipresume-');
  try {
    const db = openDatabase(join(t.dir, 'db.sqlite'));
    const queue = new JobQueue(db, {});
    queue.register('archive.add' as never, async () => undefined);
    const journals = new Journals(db);
    // A real op row for the journal's foreign key (the queue is never started).
    const opJournal = async () =>
      journals.of(DEFAULT_TENANT, await queue.enqueue('archive.add' as never, {} as never, { tenant: DEFAULT_TENANT, visible: false }));

    const small = makeFolder(join(t.dir, 'small'), SMALL, 4096);
    // The files just written are dirty in the page cache: flush them, or the first fdatasyncs pay for them.
    execFileSync('sync');
    const out = join(t.dir, 'out.zip.part');
    const variants: Array<[string, () => Promise<Run>]> = [
      ['none (no journal, no fdatasync)', () => build(out, small, null, null)],
      ['op journal (SQLite), default policy', async () => build(out, small, journalStore(await opJournal(), out), DEFAULT_POLICY)],
      [
        'sidecar, default policy',
        async () => {
          const side = new SidecarStore(`${out}.idx`);
          const r = await build(out, small, side, DEFAULT_POLICY);
          side.reset();
          return r;
        },
      ],
    ];
    const runs = new Map<string, Run[]>(variants.map(([k]) => [k, []]));
    for (let r = 0; r < RUNS; r++) for (const [k, fn] of r % 2 ? [...variants].reverse() : variants) runs.get(k)!.push(await fn());
    const base = median(runs.get(variants[0][0])!.map((x) => x.ms));
    const perEntry = small.slice(0, 1000);
    const every: CommitPolicy = { entries: 1, bytes: 2 ** 40, ms: 1e9 };
    const peBase = (await build(out, perEntry, null, null)).ms;
    const pe = await build(out, perEntry, journalStore(await opJournal(), out), every);
    const row = (k: string, v: Run[], n: number, b: number) => {
      const m = median(v.map((x) => x.ms));
      const mid = v.find((x) => x.ms === m)!;
      return {
        checkpoints: k,
        ms: m.toFixed(0),
        'vs none': `${((m / b - 1) * 100).toFixed(1)} %`,
        'µs/entry extra': (((m - b) * 1000) / n).toFixed(1),
        'checkpoints taken': mid.stats.checkpoints,
        'fdatasync ms': mid.stats.syncMs.toFixed(0),
        'journal ms': mid.stats.journalMs.toFixed(0),
      };
    };
    table(`journal cost: ${SMALL} files of 4 KiB (median of ${RUNS}, alternating order, ms)`, [
      ...variants.map(([k]) => row(k, runs.get(k)!, SMALL, base)),
      row('op journal, every entry (first 1,000 files)', [pe], 1000, peBase),
    ]);

    const big = makeFolder(join(t.dir, 'big'), 600, 256 * 1024);
    execFileSync('sync');
    const resume: number[] = [];
    const opens: number[] = [];
    const remainder: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      for (const s of big) readFileSync(s.path); // both runs read the sources from the page cache
      const temp = join(t.dir, 'big.zip.part');
      const side = new SidecarStore(`${temp}.idx`);
      await build(temp, big.slice(0, 300), side, DEFAULT_POLICY); // a build cut after ~300 entries: the file holds more than its last checkpoint
      execFileSync('sync');
      const cp = side.load()!;
      const rest = async () => {
        const restSide = new SidecarStore(join(t.dir, 'rest.zip.part.idx'));
        remainder.push((await build(join(t.dir, 'rest.zip.part'), big.slice(cp.entries.length), restSide, DEFAULT_POLICY)).ms);
        restSide.reset();
      };
      const resumed = async () => {
        const res = await build(temp, big, side, DEFAULT_POLICY);
        if (res.resumed !== cp.entries.length) throw new Error(`resumed at ${res.resumed}, checkpoint ${cp.entries.length}`);
        resume.push(res.ms);
        opens.push(res.openMs);
        side.reset();
      };
      if (r % 2) await rest(), await resumed();
      else await resumed(), await rest();
    }
    table(`resume: 600 × 256 KiB cut after ~300 entries (median of ${RUNS}, ms)`, [
      {
        run: 'resume (open: load checkpoint, cut, writer state) + the remaining entries + finish',
        ms: median(resume).toFixed(0),
        'open ms': median(opens).toFixed(1),
      },
      { run: 'the same remaining entries from zero (with checkpoints too)', ms: median(remainder).toFixed(0), 'open ms': '' },
      { run: 'overhead', ms: (median(resume) - median(remainder)).toFixed(0), 'open ms': '' },
    ]);
    await db.close();
  } finally {
    t.cleanup();
  }
}

await main();
