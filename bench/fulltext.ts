/**
 * Text extraction throughput, end to end (issue 34, first slice): a local storage holding N generated
 * one-page PDFs (or N .docx files) is added to a real server; the clock runs from the storage's creation
 * (its first sync queues the files) until every file's `text_extracts` row is `done`, under the governor's
 * default budget (100 % of one core), thumbnails on sync off (they would share that budget: LibreOffice
 * renders a .docx tile in 1–2 s). Anchor for PDFs: `pdftotext` over the same files in a shell loop (one process after
 * another, as the drain runs them), alternating with ours, medians. No anchor for .docx (reported alone).
 *
 *   npm run bench -- fulltext        (BENCH_RUNS=3, BENCH_DOCS=200)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TextExtractsRepo } from '../server/catalogue';
import { DEFAULT_TENANT } from '../server/db';
import { startTestServer, type TestServer } from '../test/helpers/server';
import { docxWith, pdfWith } from '../test/helpers/documents';
import { tempDir } from '../test/helpers/tools';
import { median, sleep, table } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DOCS = Number(process.env.BENCH_DOCS ?? 200);
const words = (i: number) => Array.from({ length: 30 }, (_, j) => `word${(i * 31 + j) % 997}`).join(' ');

async function fixtures(dir: string, kind: 'pdf' | 'docx'): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < DOCS; i++) {
    const lines = Array.from({ length: 20 }, (_, l) => `${l}: ${words(i + l)}`);
    writeFileSync(join(dir, `doc-${i}.${kind}`), kind === 'pdf' ? pdfWith(lines) : await docxWith(lines));
  }
}

/** Files per second from the storage's creation until every row is done. */
async function ours(s: TestServer, token: string, src: string, run: string): Promise<number> {
  const dir = join(src, '..', run);
  mkdirSync(dir);
  spawnSync('cp', ['-r', `${src}/.`, dir]);
  const repo = new TextExtractsRepo(s.server.db);
  const before = (await repo.counts([DEFAULT_TENANT])).done;
  const started = performance.now();
  const st = await s.api('POST', '/api/admin/storages', { token, body: { rbac_enabled: false, name: run, driver: 'local', config: { path: dir } } });
  if (st.status !== 200) throw new Error(JSON.stringify(st.body));
  for (;;) {
    const c = await repo.counts([DEFAULT_TENANT]);
    if (c.failed) throw new Error(`${c.failed} failed`);
    if (c.done - before >= DOCS) break;
    await sleep(20);
  }
  return DOCS / ((performance.now() - started) / 1000);
}

function anchor(src: string): number {
  const started = performance.now();
  const r = spawnSync('sh', ['-c', `for f in "${src}"/*.pdf; do pdftotext -enc UTF-8 -l 2000 "$f" - ; done > /dev/null`]);
  if (r.status !== 0) throw new Error(String(r.stderr));
  return DOCS / ((performance.now() - started) / 1000);
}

const t = tempDir('filedock-bench-fulltext-');
const s = await startTestServer({ SERVICE_THUMBS_ON_SYNC: '0', ...(process.env.BENCH_CPU ? { SERVICE_BACKGROUND_CPU: process.env.BENCH_CPU } : {}) });
try {
  const token = await s.login();
  const pdfs = join(t.dir, 'pdf');
  const docx = join(t.dir, 'docx');
  await fixtures(pdfs, 'pdf');
  await fixtures(docx, 'docx');
  const rows: Array<Record<string, string | number>> = [];
  const ourPdf: number[] = [];
  const anc: number[] = [];
  const ourDocx: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    anc.push(anchor(pdfs));
    ourPdf.push(await ours(s, token, pdfs, `pdf${r}`));
    ourDocx.push(await ours(s, token, docx, `docx${r}`));
    rows.push({ run: r + 1, 'anchor pdftotext /s': anc[r].toFixed(1), 'ours pdf /s': ourPdf[r].toFixed(1), 'ours docx /s': ourDocx[r].toFixed(1) });
  }
  rows.push({
    run: 'median',
    'anchor pdftotext /s': median(anc).toFixed(1),
    'ours pdf /s': median(ourPdf).toFixed(1),
    'ours docx /s': median(ourDocx).toFixed(1),
  });
  table(`text extraction, ${DOCS} files a run (ours/anchor for PDFs: ${(median(ourPdf) / median(anc)).toFixed(2)}x)`, rows);
} finally {
  await s.close();
  t.cleanup();
}
