/**
 * Recall of search inside documents on a generated corpus (issue 34): PDFs, office documents (docx, xlsx,
 * pptx, odt) and noisy scans at 300 dpi (PNG, JPEG), two known words each (test/helpers/documents.ts,
 * `writeCorpus`). Each part is its own local storage added to a real server (OCR on for the scans only),
 * timed from its creation until every file's extraction row left `pending`, under the governor's default
 * budget, thumbnails on sync off. Then every known word is searched through `GET /api/files/search?q=`
 * (8 clients): a hit is its file with `match: "content"` and a snippet holding the word (in any case: OCR reads
 * a word starting a line as `Sagivapa`, and search ignores case).
 * Targets: recall 100 % for text layers, ≥ 95 % for OCR.
 *
 *   npm run bench -- fulltext-corpus     (BENCH_PDFS=1000 BENCH_OFFICE=1000 BENCH_SCANS=100)
 */
import { loadavg } from 'node:os';
import { TextExtractsRepo } from '../server/catalogue';
import { DEFAULT_TENANT } from '../server/db';
import { SNIPPET_MARK_END, SNIPPET_MARK_START } from '../server/files/snippet';
import { cachedCorpus, type CorpusDoc } from '../test/helpers/documents';
import { startTestServer, type TestServer } from '../test/helpers/server';
import { sleep, table } from './lib';

const N = { pdfs: Number(process.env.BENCH_PDFS ?? 1000), office: Number(process.env.BENCH_OFFICE ?? 1000), scans: Number(process.env.BENCH_SCANS ?? 100) };
const CLIENTS = 8;
const load = () => loadavg()[0].toFixed(2);

/** Adds the corpus folder `part` as a storage and waits until none of its files is pending; seconds taken. */
async function index(s: TestServer, token: string, root: string, part: string, files: number, ocr: boolean): Promise<{ seconds: number; failed: number }> {
  const repo = new TextExtractsRepo(s.server.db);
  const before = await repo.counts([DEFAULT_TENANT]);
  const started = performance.now();
  const st = await s.api('POST', '/api/admin/storages', {
    token,
    body: { rbac_enabled: false, name: `c-${part}`, driver: 'local', config: { path: `${root}/${part}` }, sync_mode: 'poll', ocr },
  });
  if (st.status !== 200) throw new Error(JSON.stringify(st.body));
  for (;;) {
    const c = await repo.counts([DEFAULT_TENANT]);
    const left = c.done + c.failed + c.skipped - (before.done + before.failed + before.skipped);
    if (left >= files && c.pending === 0) return { seconds: (performance.now() - started) / 1000, failed: c.failed - before.failed };
    await sleep(100);
  }
}

interface Miss {
  doc: CorpusDoc;
  word: string;
  got: string;
}

/** Searches every known word of `docs`, CLIENTS at a time; the misses, and the search latencies in ms. */
async function recall(s: TestServer, token: string, docs: CorpusDoc[]): Promise<{ misses: Miss[]; asked: number; ms: number[] }> {
  const asks = docs.flatMap((doc) => doc.words.map((word) => ({ doc, word })));
  const misses: Miss[] = [];
  const ms: number[] = [];
  let next = 0;
  const client = async () => {
    while (next < asks.length) {
      const { doc, word } = asks[next++];
      const t0 = performance.now();
      const r = await s.api('GET', `/api/files/search?q=${word}`, { token });
      ms.push(performance.now() - t0);
      const name = doc.rel.split('/')[1];
      const hit = r.status === 200 ? r.body.entries.find((e: { name: string }) => e.name === name) : undefined;
      const snippet = String(hit?.snippet ?? '').replace(new RegExp(`[${SNIPPET_MARK_START}${SNIPPET_MARK_END}]`, 'g'), '');
      if (hit?.match !== 'content' || !snippet.toLowerCase().includes(word)) misses.push({ doc, word, got: JSON.stringify(r.body).slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  return { misses, asked: asks.length, ms };
}

const t0 = performance.now();
const { root, docs } = await cachedCorpus(N);
console.log(`corpus ${JSON.stringify(N)} at ${root} (${((performance.now() - t0) / 1000).toFixed(1)} s to make or find)`);
const s = await startTestServer({ SERVICE_THUMBS_ON_SYNC: '0' });
try {
  const token = await s.login();
  const parts = [
    { part: 'pdf', files: N.pdfs, ocr: false },
    { part: 'office', files: N.office, ocr: false },
    { part: 'scans', files: N.scans, ocr: true },
  ].filter((p) => p.files > 0);
  const rows: Array<Record<string, string | number>> = [];
  for (const p of parts) {
    const before = load();
    const { seconds, failed } = await index(s, token, root, p.part, p.files, p.ocr);
    const mine = docs.filter((d) => d.rel.startsWith(`${p.part}/`));
    const r = await recall(s, token, mine);
    const sorted = [...r.ms].sort((a, b) => a - b);
    rows.push({
      part: p.part,
      files: p.files,
      'indexed in s': seconds.toFixed(1),
      'files/s': (p.files / seconds).toFixed(1),
      failed,
      'words found': `${r.asked - r.misses.length} / ${r.asked}`,
      recall: `${(((r.asked - r.misses.length) / r.asked) * 100).toFixed(2)} %`,
      'search p50/p99 ms': `${sorted[Math.floor(sorted.length / 2)].toFixed(1)} / ${sorted[Math.floor(sorted.length * 0.99)].toFixed(1)}`,
      load: `${before} → ${load()}`,
    });
    for (const m of r.misses.slice(0, 10)) console.log(`miss ${m.doc.rel} ${m.word}: ${m.got}`);
  }
  table(`search recall on the corpus (${new Date().toISOString().slice(0, 16)} UTC)`, rows);
} finally {
  await s.close();
}
