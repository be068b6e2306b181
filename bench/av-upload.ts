/**
 * Upload throughput with antivirus in daemon mode against the same run with
 * antivirus off (target: at least 90 %), and the delay from each upload to
 * its scan (target: every file within 60 s). Runs in-process against a real
 * server and a real clamd holding only the EICAR signature; rounds alternate
 * off/on so both see the same machine load.
 *
 *   npm run bench -- av-upload [files=1000] [rounds=3] [concurrency=8]
 */
import { randomBytes } from 'node:crypto';
import { startTestServer } from '../test/helpers/server';
import { tempDir } from '../test/helpers/tools';
import { startClamd } from '../test/helpers/clamav';
import { median, table } from './lib';

const [files = 1000, rounds = 3, concurrency = 8] = process.argv.slice(2).map(Number);

const { dir: root, cleanup } = tempDir('filedock-avb-');
const { dir: avDir, cleanup: cleanupAv } = tempDir('filedock-avb-clamd-');
const clamd = await startClamd(avDir);
const s = await startTestServer();
try {
  const admin = await s.login();
  await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Bench', driver: 'local', config: { path: root } } });
  const body = randomBytes(2048);

  /** Uploads `files` single-file forms into `folder` with `concurrency` in flight; returns files per second. */
  async function run(folder: string): Promise<number> {
    await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: `/Bench/${folder}` } });
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i; (i = next++) < files; ) {
          const form = new FormData();
          form.append('path', `/Bench/${folder}`);
          form.append('file', new Blob([new Uint8Array(body)]), `f${i}.bin`);
          const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
          if (r.status !== 200) throw new Error(`upload ${i}: ${r.status} ${await r.text()}`);
          await r.arrayBuffer();
        }
      }),
    );
    return files / ((performance.now() - t0) / 1000);
  }

  const off: number[] = [];
  const on: number[] = [];
  const lagMax: number[] = [];
  const lagP50: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await s.api('PATCH', '/api/admin/protection', { token: admin, body: { av_enabled: false } });
    off.push(await run(`off-${round}`));
    await s.api('PATCH', '/api/admin/protection', { token: admin, body: { av_enabled: true, av_mode: 'daemon', av_clamd_addr: clamd.address } });
    on.push(await run(`on-${round}`));
    await s.server.queue.idle(120_000, 0);
    const rows = s.server.db.sqlite!.prepare('SELECT state, written_at, scanned_at FROM av_scans WHERE path LIKE ?').all(`on-${round}/%`) as Array<{
      state: string;
      written_at: string;
      scanned_at: string;
    }>;
    if (rows.length !== files || rows.some((r) => r.state !== 'clean')) throw new Error(`round ${round}: ${rows.length} of ${files} scanned clean`);
    const lags = rows.map((r) => Date.parse(r.scanned_at) - Date.parse(r.written_at)).sort((a, b) => a - b);
    lagMax.push(lags[lags.length - 1]);
    lagP50.push(lags[Math.floor(lags.length / 2)]);
  }
  table(`Upload ${files} x 2 KiB files, ${concurrency} in flight (median of ${rounds})`, [
    { run: 'antivirus off', 'files/s': median(off).toFixed(0), 'scan lag p50 (ms)': '-', 'scan lag max (ms)': '-' },
    { run: 'antivirus daemon', 'files/s': median(on).toFixed(0), 'scan lag p50 (ms)': median(lagP50), 'scan lag max (ms)': Math.max(...lagMax) },
  ]);
  console.log(
    `\nratio on/off: ${((median(on) / median(off)) * 100).toFixed(1)} % (target >= 90 %); worst scan lag ${(Math.max(...lagMax) / 1000).toFixed(1)} s (target <= 60 s)`,
  );
} finally {
  await s.close();
  await clamd.stop();
  cleanup();
  cleanupAv();
}
