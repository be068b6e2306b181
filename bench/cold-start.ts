/**
 * Cold start to the first 200 of /api/capabilities (target < 1.5 s) and idle
 * RSS (target < 120 MB), five starts, medians. The anchor is a bare
 * `node -e` HTTP server started the same way. Also `service version` (target
 * ≤ 0.5 s, issue 37) against a bare `node -e` that prints, with its peak RSS
 * where GNU time is installed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, freePort, median, root, sleep, startService, table } from './lib';

/** Wall time (ms) and peak RSS (MB, NaN without /usr/bin/time) of one short command. */
function once(args: string[]): { ms: number; mb: number } {
  const gnuTime = existsSync('/usr/bin/time');
  const t0 = performance.now();
  const r = gnuTime
    ? spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], { encoding: 'utf8' })
    : spawnSync(process.execPath, args, { encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, mb: gnuTime ? Number(r.stderr.trim().split('\n').pop()) / 1024 : NaN };
}

async function bareNode(): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const p = spawn(process.execPath, ['-e', `require('http').createServer((q,s)=>s.end('{}')).listen(${port},'127.0.0.1')`]);
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/`)).ok) break;
    } catch {
      await sleep(5);
    }
  }
  const ms = performance.now() - t0;
  p.kill();
  return ms;
}

ensureBuilt();
const version = Array.from({ length: 5 }, () => [once(['-e', 'console.log(1)']), once([join(root, 'dist/server/cli.js'), 'version'])]);
table('service version (5 runs, medians)', [
  { what: 'bare node -e console.log', ms: median(version.map((v) => v[0].ms)).toFixed(0), 'peak RSS MB': median(version.map((v) => v[0].mb)).toFixed(1) },
  { what: 'service version', ms: median(version.map((v) => v[1].ms)).toFixed(0), 'peak RSS MB': median(version.map((v) => v[1].mb)).toFixed(1) },
]);
const starts: number[] = [];
const anchors: number[] = [];
const rss: number[] = [];
for (let i = 0; i < 5; i++) {
  anchors.push(await bareNode());
  const s = await startService({ SERVICE_ADMIN_EMAIL: 'a@example.test', SERVICE_ADMIN_PASSWORD: 'bench-password' });
  starts.push(s.startMs);
  await sleep(3000);
  rss.push(s.rssMb());
  await s.stop();
}
table('cold start (5 runs, medians)', [
  { what: 'bare node http server', 'start ms': median(anchors).toFixed(0) },
  { what: 'filedock serve → first 200 /api/capabilities', 'start ms': median(starts).toFixed(0) },
  { what: 'filedock idle RSS (MB, 3 s after start)', 'start ms': median(rss).toFixed(1) },
]);
console.log(`\ntarget: start < 1500 ms → ${median(starts) < 1500 ? 'PASS' : 'FAIL'}; idle RSS < 120 MB → ${median(rss) < 120 ? 'PASS' : 'FAIL'}`);
