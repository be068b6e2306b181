/**
 * App store browse (issue 33 target: a catalogue with 10,000 entries, browse
 * p99 ≤ 100 ms), in one process with the server: a signed 10,000-entry index
 * served on loopback, connected once, then `GET /api/admin/app-store/catalogue`
 * (the default page of 100, a search, the updates filter) timed over HTTP.
 * The machine is shared: the load average is printed with the figures.
 *
 *   npm run bench -- app-store            (BENCH_ENTRIES=10000, BENCH_REQUESTS=200)
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { serveBigStore } from '../test/helpers/big-store';
import { startTestServer } from '../test/helpers/server';
import { table } from './lib';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 10_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

const store = await serveBigStore(ENTRIES);
const s = await startTestServer();
try {
  const admin = await s.login();
  const t0 = performance.now();
  const c = await s.api('POST', '/api/admin/app-store/stores', {
    token: admin,
    body: { url: store.url, public_key_pem: store.publicKeyPem },
  });
  if (c.status !== 201) throw new Error(`connect: ${c.status} ${JSON.stringify(c.body)}`);
  const connectMs = performance.now() - t0;
  const rows = [];
  for (const [label, query] of [
    ['first page (100)', ''],
    ['page 50', '?offset=5000'],
    ['search', '?q=app%20999'],
    ['updates only', '?updates=true'],
  ]) {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const a = performance.now();
      const r = await fetch(`${s.url}/api/admin/app-store/catalogue${query}`, { headers: { authorization: `Bearer ${admin}` } });
      bytes = (await r.arrayBuffer()).byteLength;
      if (r.status !== 200) throw new Error(`${label}: ${r.status}`);
      times.push(performance.now() - a);
    }
    rows.push({ browse: label, 'median ms': pct(times, 50).toFixed(1), 'p99 ms': pct(times, 99).toFixed(1), 'body bytes': bytes });
  }
  table(
    `app store catalogue, ${ENTRIES} entries (index ${(store.bytes / 1e6).toFixed(1)} MB, connect ${connectMs.toFixed(0)} ms); load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
    rows,
  );
} finally {
  await s.close();
  store.server.close();
}
