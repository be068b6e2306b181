/**
 * What an API key costs against a session, in the same run (issue 17's
 * targets): `GET /api/auth/me` and a 1,000-row listing page, each signed with
 * a session token and with a key; and the same listing with a key confined
 * to the listed folder, on a storage with per-person access (50 grants), where
 * the access decision must stay set-based. Runs alternate (session, key,
 * confined key) over BENCH_ROUNDS rounds; medians are compared.
 * Targets: a key within 10 % of a session; the confined listing's p99 within
 * 10 % of the unconfined one.
 *
 *   node --import tsx bench/key-auth.ts      (BENCH_ROUNDS=3, BENCH_SECONDS=5)
 */
import { ensureBuilt, median, table, wrk } from './lib';
import { syncedFolder } from './listing';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const USER = { email: 'reader@example.test', password: 'reader-password-1' };

ensureBuilt();
const { svc, auth, cleanup } = await syncedFolder(1000);
const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = auth) => {
  const r = await fetch(svc.url + path, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.json();
};
try {
  // 49 other people and a group hold grants; the reader reaches the storage through the group.
  const ids: number[] = [];
  for (let i = 0; i < 49; i++) ids.push((await call('POST', '/api/admin/users', { email: `p${i}@example.test`, password: 'people-password-1' })).user.id);
  await call('POST', '/api/admin/users', { ...USER, groups: ['readers'] });
  await call('PUT', '/api/admin/storages/1/grants', {
    grants: [...ids.map((user_id) => ({ user_id, level: 'viewer' })), { group: 'readers', level: 'editor' }],
  });
  await call('PATCH', '/api/admin/storages/1', { rbac_enabled: true });
  const session = { authorization: `Bearer ${(await call('POST', '/api/auth/login', USER, {})).token}` };
  const key = { authorization: `Bearer ${(await call('POST', '/api/auth/keys', { name: 'bench', verbs: ['files:read'] }, session)).token}` };
  const confined = {
    authorization: `Bearer ${(await call('POST', '/api/auth/keys', { name: 'bench-root', verbs: ['files:read'], root: '/Bench/big' }, session)).token}`,
  };

  const me = `${svc.url}/api/auth/me`;
  const listing = `${svc.url}/api/files/manager?path=/Bench/big&limit=1000`;
  const page = await (await fetch(listing, { headers: confined })).json();
  if (page.entries?.length !== 1000) throw new Error(`confined key listing: ${JSON.stringify(page).slice(0, 200)}`);

  const cases = [
    ['/api/auth/me, session', me, session],
    ['/api/auth/me, API key', me, key],
    ['1,000-row listing, session', listing, session],
    ['1,000-row listing, API key', listing, key],
    ['1,000-row listing, key confined to the folder', listing, confined],
  ] as const;
  const runs = new Map<string, Array<{ rps: number; p99: number; bad: number }>>(cases.map(([n]) => [n, []]));
  for (const [, url, headers] of cases) await wrk(url, { connections: 8, seconds: 1, headers }); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url, headers] of cases) {
      const r = await wrk(url, { connections: 8, seconds: SECONDS, headers });
      runs.get(name)!.push({ rps: r.rps, p99: r.p99, bad: r.errors + r.non2xx });
    }
  }
  const m = (name: string) => {
    const xs = runs.get(name)!;
    return {
      rps: median(xs.map((x) => x.rps)),
      p99: median(xs.map((x) => x.p99)),
      bad: xs.reduce((a, x) => a + x.bad, 0),
      all: xs.map((x) => x.rps).join(' '),
    };
  };
  table(
    `medians of ${ROUNDS} rounds, 8 connections, ${SECONDS} s each; storage with 50 grants`,
    cases.map(([name]) => {
      const x = m(name);
      return { case: name, 'req/s': x.rps, 'p99 ms': x.p99, errors: x.bad, 'req/s per round': x.all };
    }),
  );
  const cost = (a: string, b: string) => m(a).rps / m(b).rps - 1;
  const meCost = -cost(cases[1][0], cases[0][0]);
  const lsCost = -cost(cases[3][0], cases[2][0]);
  const p99Ratio = m(cases[4][0]).p99 / m(cases[3][0]).p99;
  console.log(`\nkey vs session, /api/auth/me: ${(meCost * 100).toFixed(1)} % more cost (target < 10 %) ${meCost < 0.1 ? 'PASS' : 'FAIL'}`);
  console.log(`key vs session, 1,000-row listing: ${(lsCost * 100).toFixed(1)} % more cost (target < 10 %) ${lsCost < 0.1 ? 'PASS' : 'FAIL'}`);
  console.log(`confined vs unconfined key, listing p99: ${(p99Ratio * 100).toFixed(0)} % (target <= 110 %) ${p99Ratio <= 1.1 ? 'PASS' : 'FAIL'}`);
} finally {
  await cleanup();
}
