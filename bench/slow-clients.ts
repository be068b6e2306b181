/**
 * Slow clients: 300 slowloris sockets (a request line, then one header line
 * every 5 s, never the blank line) against the service, while a
 * fresh-connection probe asks /api/capabilities every 50 ms. Anchor in the
 * same run: nginx with `client_header_timeout 20s` under the same sockets.
 * Targets: every slow socket closed within the 20 s header timeout (+1 s of
 * check interval), probe p99 unharmed, RSS back near its level.
 *
 *   node --import tsx bench/slow-clients.ts   (BENCH_SOCKETS=300)
 */
import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, sleep, startNginx, startService, table, pct } from './lib';
import { adminEnv } from './download';
import { tempDir } from '../test/helpers/tools';

const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 300);
const GIVE_UP_S = 120;

/** Opens `n` slowloris sockets to `port`; resolves with the seconds until each was closed by the server. */
export async function slowloris(port: number, n: number): Promise<number[]> {
  const t0 = performance.now();
  const closed: number[] = [];
  const socks: Socket[] = [];
  const timers: NodeJS.Timeout[] = [];
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve) => {
          const s = connect(port, '127.0.0.1', () => {
            s.write('GET / HTTP/1.1\r\nHost: localhost\r\n');
            resolve();
          });
          s.on('error', () => undefined);
          s.resume(); // read what the server sends (its 408), or its closing is only seen later
          s.once('close', () => closed.push((performance.now() - t0) / 1000));
          const t = setInterval(() => s.writable && s.write(`X-Slow-${Math.random().toString(36).slice(2)}: 1\r\n`), 5000);
          timers.push(t);
          socks.push(s);
        }),
    ),
  );
  const end = Date.now() + GIVE_UP_S * 1000;
  while (closed.length < n && Date.now() < end) await sleep(100);
  for (const t of timers) clearInterval(t);
  for (const s of socks) s.destroy();
  return closed.concat(Array(Math.max(0, n - closed.length)).fill(GIVE_UP_S));
}

/** Capabilities (or `/`) on a fresh connection every 50 ms until stopped; ms each. */
function probe(url: string): { stop(): Promise<number[]> } {
  const lat: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      await new Promise<void>((resolve) => {
        const t0 = performance.now();
        const req = request(url, { agent: false, timeout: 10_000 }, (res) => {
          res.resume();
          res.on('end', () => (lat.push(performance.now() - t0), resolve()));
        });
        req.on('timeout', () => req.destroy());
        req.on('error', () => (lat.push(10_000), resolve()));
        req.end();
      });
      await sleep(50);
    }
  })();
  return { stop: async () => ((running = false), await loop, lat) };
}

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-slow-');
  mkdirSync(join(files.dir, 'www'));
  writeFileSync(join(files.dir, 'www/index.html'), 'ok');
  const svc = await startService(adminEnv);
  const nginx = await startNginx(join(files.dir, 'www'), 'client_header_timeout 20s;');
  try {
    const rows = [];
    const targets: Array<[string, number, string]> = [
      ...(nginx ? [['anchor: nginx, client_header_timeout 20s', Number(new URL(nginx.url).port), `${nginx.url}/`] as [string, number, string]] : []),
      ['service (SERVICE_HTTP_HEADERS_TIMEOUT 20s)', svc.port, `${svc.url}/api/capabilities`],
    ];
    let verdict = true;
    for (const [name, port, probeUrl] of targets) {
      const rssBefore = name.startsWith('service') ? svc.rssMb() : NaN;
      const p = probe(probeUrl);
      const closed = await slowloris(port, SOCKETS);
      const lat = await p.stop();
      const last = Math.max(...closed);
      rows.push({
        server: name,
        sockets: SOCKETS,
        'first closed s': Math.min(...closed).toFixed(1),
        'last closed s': last.toFixed(1),
        'probe p50 ms': pct(lat, 50).toFixed(1),
        'probe p99 ms': pct(lat, 99).toFixed(1),
        'probe max ms': Math.max(...lat).toFixed(1),
        'RSS before/after MB': Number.isNaN(rssBefore) ? 'n/a' : `${rssBefore.toFixed(0)}/${svc.rssMb().toFixed(0)}`,
      });
      if (name.startsWith('service')) verdict = last <= 21.5 && pct(lat, 99) <= 50;
    }
    table(`${SOCKETS} slowloris sockets (a header line every 5 s), fresh-connection probe every 50 ms`, rows);
    console.log(`\nservice: every slow socket closed within 20 s + 1 s and probe p99 <= 50 ms: ${verdict ? 'PASS' : 'FAIL'}`);
  } finally {
    nginx?.stop();
    await svc.stop();
    files.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
