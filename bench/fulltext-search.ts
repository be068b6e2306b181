/**
 * Content search at scale (issue 34): a catalogue of 1,000,000 files of which 100,000 have extracted text,
 * on SQLite and on PostgreSQL, searched by `GET /api/files/search?q=` from 8 wrk connections.
 *
 * Seeding (not a sync of a million real files): a storage on an empty folder (`ondemand` sync, so nothing
 * walks it afterwards) gets 1,000 folders × 1,000 rows written through the sync's repository in units of
 * 5,000 (SyncNodesRepo), their names indexed by the name indexer's statement (SearchIndexRepo.indexSlice),
 * and every tenth file (a `.pdf` name) its text through the extraction's own path: TextExtractsRepo
 * markPending, then finish with `done` and a body of 60 words (8 finishes at a time). Bodies draw from a
 * 2,000-word vocabulary (a word in ~3,000 documents: `common`) plus one word of 10,000 (in 10: `rare`).
 * Target: p99 ≤ 50 ms at 8 clients on both databases.
 *
 *   npm run bench -- fulltext-search    (BENCH_FILES=1000000 BENCH_DOCS=100000 BENCH_SECONDS=15 BENCH_DBS=sqlite,postgres)
 *
 * SQLite's seeded data dir is kept in the temp folder and reused by the next run; so is PostgreSQL's when
 * BENCH_PG_URL names a database that outlives the run (an empty one the first time), instead of a throwaway cluster.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TextExtractsRepo } from '../server/catalogue';
import { DEFAULT_TENANT } from '../server/db';
import { SearchIndexRepo } from '../server/catalogue/search-index.repo';
import { SyncNodesRepo, type NewNode } from '../server/catalogue/sync.repo';
import { corpusWord } from '../test/helpers/documents';
import { startPostgres } from '../test/helpers/postgres';
import { startTestServer, type TestServer } from '../test/helpers/server';
import { tempDir } from '../test/helpers/tools';
import { table, wrk } from './lib';

const FILES = Number(process.env.BENCH_FILES ?? 1_000_000);
const DOCS = Number(process.env.BENCH_DOCS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const DBS = (process.env.BENCH_DBS ?? 'sqlite,postgres').split(',');
const PG_URL = process.env.BENCH_PG_URL;
const PER_DIR = 1000;
const UNIT = 5000;
const COMMON = 2000;
const RARE = 10_000;
const EVERY = Math.max(1, Math.round(FILES / DOCS));
const load = () => loadavg()[0].toFixed(2);
/** The service's CPU (this process: the server runs in it, wrk outside) per request tells cost apart from the shared machine's load. */
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

/** Word j of the vocabulary: 5 to 9 letters drawn by English letter frequencies (trigrams spread as in prose, roughly). */
function word(j: number): string {
  const letters = 'eeeeeeeeeeeetttttttttaaaaaaaaooooooooiiiiiiinnnnnnnsssssshhhhhhrrrrrrddddlllluuucccmmmwwffggyyppbbvkjxqz';
  let x = (j + 1) * 2_654_435_761;
  const rand = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) / 4294967296);
  const n = 5 + Math.floor(rand() * 5);
  let w = '';
  for (let i = 0; i < n; i++) w += letters[Math.floor(rand() * letters.length)];
  return w;
}
const common = (j: number) => word(j % COMMON);
/** Rare words are the corpus's own (`kefikami`): no common word holds one. */
const rare = (j: number) => corpusWord(j % RARE);
/** The body of the d-th document: 60 common words and its rare one in the middle. */
const body = (d: number) => Array.from({ length: 60 }, (_, k) => (k === 30 ? rare(d) : common(d * 61 + k * 7))).join(' ');

async function seed(s: TestServer, token: string, dir: string): Promise<string> {
  const t0 = performance.now();
  const st = await s.api('POST', '/api/admin/storages', {
    token,
    body: { rbac_enabled: false, name: 'Big', driver: 'local', config: { path: dir }, sync_mode: 'ondemand' },
  });
  if (st.status !== 200) throw new Error(JSON.stringify(st.body));
  const storageId = s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Big')!.id;
  const db = s.server.db;
  const nodes = new SyncNodesRepo(db);
  const now = new Date().toISOString();
  const mtime = Date.now();
  const rows: NewNode[] = [];
  const flush = async () => {
    const batch = rows.splice(0);
    await nodes.write((t) => nodes.insertManyIn(t, { id: storageId, tenant_id: 1 }, batch, now), 30_000);
  };
  for (let i = 0; i < FILES; i++) {
    const d = Math.floor(i / PER_DIR);
    const folder = `d${String(d).padStart(4, '0')}`;
    if (i % PER_DIR === 0) rows.push({ e: { path: folder, name: folder, type: 'dir', size: 0, mtime }, name: folder, mime: null, mtime });
    const doc = i % EVERY === 0;
    const name = doc ? `report-${i}.pdf` : `file-${i}.txt`;
    rows.push({
      e: { path: `${folder}/${name}`, name, type: 'file', size: 1000 + (i % 5000), mtime },
      name,
      mime: doc ? 'application/pdf' : 'text/plain',
      mtime,
    });
    if (rows.length >= UNIT) await flush();
  }
  await flush();
  const t1 = performance.now();
  const names = new SearchIndexRepo(db);
  const max = await names.maxNodeId([DEFAULT_TENANT]);
  for (let from = 0; from <= max; from += 20_000) await names.indexSlice([DEFAULT_TENANT], from, from + 20_000);
  const t2 = performance.now();
  const texts = new TextExtractsRepo(db);
  const ids: Array<{ id: number; size: number; mtime: number }> = (
    await db.async.all(
      db.k
        .selectFrom('nodes')
        .select(['id', 'size', 'mtime'])
        .where('tenant_id', '=', 1)
        .where('storage_id', '=', storageId)
        .where('name', 'like', 'report-%')
        .orderBy('id'),
    )
  ).map((r) => ({ id: Number(r.id), size: Number(r.size), mtime: Number(r.mtime) }));
  for (let i = 0; i < ids.length; i += UNIT) await texts.markPending({ id: storageId, tenant_id: 1 }, ids.slice(i, i + UNIT));
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const d = next++;
      const f = ids[d];
      await texts.finish({ id: f.id, tenant_id: 1 }, f, { state: 'done', reason: null, text: body(d), capped: false });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const t3 = performance.now();
  const sec = (a: number, b: number) => ((b - a) / 1000).toFixed(0);
  return `nodes ${sec(t0, t1)} s, names ${sec(t1, t2)} s, ${ids.length} texts ${sec(t2, t3)} s`;
}

/** A wrk script asking for one of `words` at random per request. */
const script = (words: string[]) => `
local words = { ${words.map((w) => `"${w}"`).join(', ')} }
math.randomseed(os.time())
request = function() return wrk.format("GET", "/api/files/search?q=" .. words[math.random(1, #words)]) end`;

const cluster = DBS.includes('postgres') && !PG_URL ? await startPostgres() : null;
const rows: Array<Record<string, string | number>> = [];
try {
  for (const dbName of DBS) {
    const t = tempDir('filedock-bench-ftsearch-');
    const env: Record<string, string> = { SERVICE_THUMBS_ON_SYNC: '0', SERVICE_TEXT_INDEX: 'false' };
    // A seeded data dir (and its database) is kept for the next run: seeding 100,000 texts takes minutes.
    const pg = dbName === 'postgres';
    const kept = !pg || PG_URL ? join(tmpdir(), `filedock-bench-ftsearch-${FILES}-${DOCS}${pg ? '-pg' : ''}`) : null;
    if (kept) env.SERVICE_DATA_DIR = kept;
    if (pg) env.SERVICE_DATABASE_URL = PG_URL ?? (await cluster!.createDatabase('bench_ftsearch'));
    const s = await startTestServer(env);
    try {
      const token = await s.login();
      if (!kept || !existsSync(join(kept, 'seeded'))) {
        const empty = join(kept ?? t.dir, 'empty');
        mkdirSync(empty, { recursive: true });
        const l0 = load();
        const how = await seed(s, token, empty);
        if (kept) writeFileSync(join(kept, 'seeded'), how);
        console.log(`${dbName}: seeded ${FILES} files, ${DOCS} with text (${how}), load ${l0} → ${load()}`);
      }
      // A connection kept alive through the seeding may be closed under the first request: once more.
      const ask = () => s.api('GET', `/api/files/search?q=${rare(7)}`, { token });
      const probe = await ask().catch(ask);
      if (probe.status !== 200 || probe.body.entries[0]?.match !== 'content') throw new Error(`search: ${JSON.stringify(probe.body).slice(0, 400)}`);
      const headers = { authorization: `Bearer ${token}` };
      for (const [kind, words] of [
        ['rare word (10 documents)', Array.from({ length: 200 }, (_, i) => rare(i * 37))],
        ['common word (~3,000 documents)', Array.from({ length: 200 }, (_, i) => common(i * 11))],
        ['two words', Array.from({ length: 200 }, (_, i) => `${common(i * 13)}+${rare(i * 41)}`)],
      ] as const) {
        const before = load();
        const cpu0 = process.cpuUsage();
        const r = await wrk(s.url, { connections: 8, seconds: SECONDS, headers, script: script([...words]), timeoutS: 30 });
        rows.push({
          database: dbName,
          query: kind,
          'req/s': r.rps,
          'p50 ms': r.p50,
          'p99 ms': r.p99,
          'max ms': r.max,
          'CPU ms/req': (cpuMs(process.cpuUsage(cpu0)) / r.requests).toFixed(2),
          errors: r.errors + r.non2xx,
          load: `${before} → ${load()}`,
        });
        console.log(JSON.stringify(rows.at(-1)));
      }
    } finally {
      await s.close();
      t.cleanup();
    }
  }
  table(`content search, ${FILES} files, ${DOCS} with text, 8 connections, ${SECONDS} s each`, rows);
} finally {
  await cluster?.destroy();
}
