/**
 * Public pages of share links: server time to answer (repeated requests on one
 * keep-alive connection, p50/p99) and the bytes shipped (HTML with its inline
 * CSS and JS; raw and gzip), for a single-file link (its page is the PIN
 * form: without a PIN a file link is the download itself), a folder of 1,000
 * entries and a file request's upload page. Anchor: nginx serving the same
 * bytes from a file. Targets: under 100 ms, under 50 KB.
 *
 *   node --import tsx bench/share-page.ts     (BENCH_REQUESTS=300)
 */
import { Agent, get } from 'node:http';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { adminEnv, mount } from './download';
import { createLink } from './share-download';
import { ensureBuilt, sleep, startNginx, startService, table } from './lib';
import { tempDir } from '../test/helpers/tools';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const ENTRIES = 1000;
const HTML = { accept: 'text/html', 'accept-language': 'en' };

interface Answer {
  status: number;
  body: Buffer;
  encoding: string | undefined;
}

function request(agent: Agent, url: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), encoding: res.headers['content-encoding'] }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** p50/p99 of `REQUESTS` sequential requests after a warm-up, on one keep-alive connection. */
async function timed(url: string, headers: Record<string, string>, status: number): Promise<{ p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < 20; i++) await request(agent, url, headers);
    const ms: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const r = await request(agent, url, headers);
      ms.push(performance.now() - t0);
      if (r.status !== status) throw new Error(`${url}: ${r.status}`);
    }
    return { p50: pct(ms, 50), p99: pct(ms, 99) };
  } finally {
    agent.destroy();
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-sharepage-');
  const svc = await startService(adminEnv);
  const anchorDir = tempDir('filedock-bench-sharepage-nginx-');
  chmodSync(anchorDir.dir, 0o755);
  const nginx = await startNginx(anchorDir.dir);
  try {
    writeFileSync(join(files.dir, 'report.pdf'), Buffer.alloc(100_000, 1));
    mkdirSync(join(files.dir, 'photos'));
    for (let i = 0; i < ENTRIES; i++) writeFileSync(join(files.dir, 'photos', `IMG_${String(20240000 + i)}_holiday.jpg`), Buffer.alloc(1024, i % 256));
    mkdirSync(join(files.dir, 'inbox'));
    const bearer = await mount(svc, 'Bench', files.dir);
    const fileLink = await createLink(svc, bearer, { path: '/Bench/report.pdf', pin: '2468' });
    const folderLink = await createLink(svc, bearer, { path: '/Bench/photos', max_downloads: 100 });
    const dropLink = await createLink(svc, bearer, { path: '/Bench/inbox', kind: 'drop' });
    for (let i = 0; i < 600; i++) {
      const m = (await (await fetch(`${svc.url}/api/files/share/${folderLink.token}`)).json()) as { size: number };
      if (m.size === ENTRIES * 1024) break;
      await sleep(100);
    }
    const pages = [
      { page: 'single file (PIN form)', url: `${svc.url}/s/${fileLink.token}`, status: 401 },
      { page: `folder, ${ENTRIES} entries`, url: `${svc.url}/s/${folderLink.token}`, status: 200 },
      { page: 'file request (upload page)', url: `${svc.url}/d/${dropLink.token}`, status: 200 },
    ];
    const rows: Array<Record<string, string | number>> = [];
    let pass = true;
    for (const [i, p] of pages.entries()) {
      const agent = new Agent();
      const plain = await request(agent, p.url, HTML);
      const zipped = await request(agent, p.url, { ...HTML, 'accept-encoding': 'gzip' });
      agent.destroy();
      const html = zipped.encoding === 'gzip' ? gunzipSync(zipped.body) : zipped.body;
      if (!html.toString('utf8').startsWith('<!doctype html>') || plain.body.length !== html.length) throw new Error(`${p.page}: unexpected page`);
      if (p.page.startsWith('folder') && (html.toString('utf8').match(/<li>/g) ?? []).length !== ENTRIES)
        throw new Error('the folder page does not list every entry');
      const ours = await timed(p.url, { ...HTML, 'accept-encoding': 'gzip' }, p.status);
      let anchor = '';
      if (nginx) {
        writeFileSync(join(anchorDir.dir, `p${i}.html`), html);
        const a = await timed(`${nginx.url}/p${i}.html`, HTML, 200);
        anchor = `${a.p50.toFixed(2)} / ${a.p99.toFixed(2)}`;
      }
      const kb = (n: number) => (n / 1000).toFixed(1);
      pass &&= ours.p99 < 100 && zipped.body.length < 50_000;
      rows.push({
        page: p.page,
        'p50 ms': ours.p50.toFixed(2),
        'p99 ms': ours.p99.toFixed(2),
        'nginx same bytes p50/p99 ms': anchor || 'n/a',
        'raw KB': kb(plain.body.length),
        'gzip KB': kb(zipped.body.length),
      });
    }
    table(`Public pages: ${REQUESTS} sequential requests each (keep-alive, gzip accepted); bytes = HTML with inline CSS and JS`, rows);
    console.log(`\ntargets: p99 < 100 ms and gzip < 50 KB on every page: ${pass ? 'PASS' : 'FAIL'}`);
  } finally {
    nginx?.stop();
    await svc.stop();
    anchorDir.cleanup();
    files.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
