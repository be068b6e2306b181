/**
 * GET /api/auth/me with a Bearer token, 32 connections (target ≥ 3,000 req/s
 * on 2 cores). Anchor in the same run: nginx serving a 4 KiB static file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cannon, ensureBuilt, startNginx, startService, table } from './lib';

ensureBuilt();
const s = await startService({ SERVICE_ADMIN_EMAIL: 'a@example.test', SERVICE_ADMIN_PASSWORD: 'bench-password' });
const login = await fetch(`${s.url}/api/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'a@example.test', password: 'bench-password' }),
});
const { token } = (await login.json()) as { token: string };
const dir = mkdtempSync(join(tmpdir(), 'anchor-'));
writeFileSync(join(dir, 'f.json'), 'x'.repeat(4096));
const nginx = await startNginx(dir);
const rows = [];
await cannon(`${s.url}/api/auth/me`, { connections: 32, seconds: 2, headers: { authorization: `Bearer ${token}` } }); // warm-up
const me = await cannon(`${s.url}/api/auth/me`, { connections: 32, seconds: 8, headers: { authorization: `Bearer ${token}` } });
rows.push({ what: 'filedock GET /api/auth/me (Bearer)', 'req/s': me.rps, 'p50 ms': me.p50, 'p99 ms': me.p99, non2xx: me.non2xx });
if (nginx) {
  const n = await cannon(`${nginx.url}/f.json`, { connections: 32, seconds: 8 });
  rows.push({ what: 'anchor: nginx 4 KiB static', 'req/s': n.rps, 'p50 ms': n.p50, 'p99 ms': n.p99, non2xx: n.non2xx });
  nginx.stop();
}
rows.push({ what: 'RSS after load (MB)', 'req/s': s.rssMb().toFixed(1), 'p50 ms': '', 'p99 ms': '', non2xx: '' });
await s.stop();
table('GET /api/auth/me, 32 connections', rows);
console.log(`\ntarget ≥ 3000 req/s → ${me.rps >= 3000 && me.non2xx === 0 ? 'PASS' : 'FAIL'}`);
