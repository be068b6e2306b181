/**
 * Layer rules of ../shared/DESIGN.md: a module imports only from layers below
 * it (or its own module). `npm run depcheck` fails on a violation.
 */
const L = {
  0: ['lib', 'errors', 'config', 'contract', 'version\\.ts'],
  1: ['db', 'jobs', 'events', 'audit'],
  2: ['storage'],
  3: ['auth', 'settings', 'catalogue'],
  4: ['files', 'uploads', 'archives', 'shares', 'thumbs', 'protection', 'replication', 'docserver'],
  5: ['plugins', 'assistant', 'update'],
  6: ['http', 'cli'],
  7: ['main\\.ts'],
};
const mods = (layers) => layers.flatMap((n) => L[n]);
const alt = (list) => `^server/(${list.join('|')})`;
const forbidden = [];
for (let n = 0; n <= 6; n++) {
  const higher = Object.keys(L).map(Number).filter((m) => m > n);
  const peers = L[n];
  forbidden.push({
    name: `layer-${n}-imports-up`,
    comment: `layer ${n} (${peers.join(', ')}) may not import from a higher layer`,
    severity: 'error',
    // The CLI starts the server: `service serve` calls startServer() of main.ts (DESIGN: process model).
    from: { path: alt(peers), pathNot: n === 6 ? '^server/cli/serve\\.ts$' : undefined },
    to: { path: alt(mods(higher)) },
  });
}
forbidden.push(
  { name: 'server-never-imports-electron', severity: 'error', from: { path: '^server/' }, to: { path: '^(electron/|node_modules/electron/)' } },
  { name: 'storage-knows-no-db', comment: 'drivers know nothing of the database, users or HTTP', severity: 'error', from: { path: '^server/storage/' }, to: { path: '^node_modules/(better-sqlite3|kysely|koa|@koa)' } },
  { name: 'renderer-only-types-from-server', severity: 'error', from: { path: '^renderer/' }, to: { path: '^server/', pathNot: '^server/contract/' } },
  { name: 'electron-only-types-from-server', severity: 'error', from: { path: '^electron/' }, to: { path: '^server/', pathNot: '^server/contract/' } },
  { name: 'no-circular', severity: 'error', from: { path: '^server/' }, to: { circular: true } },
);
module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.tsx?$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'] },
  },
};
