/**
 * Layer rules of ../shared/DESIGN.md: a module imports only from layers below
 * it (or its own module). `npm run depcheck` fails on a violation.
 */
const L = {
  0: ['lib', 'errors', 'config', 'contract', 'version\\.ts'],
  1: ['db', 'jobs', 'events', 'audit'],
  2: ['storage'],
  3: ['auth', 'settings', 'catalogue'],
  4: ['files'],
  5: ['uploads', 'archives', 'shares', 'thumbs', 'fulltext', 'protection', 'replication', 'docserver', 'vault'],
  6: ['plugins', 'store', 'assistant', 'update', 'gateways', 'backup'],
  7: ['http'],
  8: ['compose\\.ts', 'jobs-registry\\.ts', 'main\\.ts'],
  9: ['cli'],
};
const mods = (layers) => layers.flatMap((n) => L[n]);
const alt = (list) => `^server/(${list.join('|')})`;
const forbidden = [];
for (let n = 0; n <= 8; n++) {
  const higher = Object.keys(L)
    .map(Number)
    .filter((m) => m > n);
  const peers = L[n];
  forbidden.push({
    name: `layer-${n}-imports-up`,
    comment: `layer ${n} (${peers.join(', ')}) may not import from a higher layer`,
    severity: 'error',
    from: { path: alt(peers) },
    to: { path: alt(mods(higher)) },
  });
}
forbidden.push(
  { name: 'server-never-imports-electron', severity: 'error', from: { path: '^server/' }, to: { path: '^(electron/|node_modules/electron/)' } },
  {
    name: 'storage-knows-no-db',
    comment: 'drivers know nothing of the database, users or HTTP',
    severity: 'error',
    from: { path: '^server/storage/' },
    to: { path: '^node_modules/(better-sqlite3|kysely|koa|@koa)' },
  },
  { name: 'renderer-only-types-from-server', severity: 'error', from: { path: '^renderer/' }, to: { path: '^server/', pathNot: '^server/contract/' } },
  { name: 'electron-only-types-from-server', severity: 'error', from: { path: '^electron/' }, to: { path: '^server/', pathNot: '^server/contract/' } },
  {
    name: 'no-circular',
    comment: 'no import cycle that exists at run time (types may refer to each other within a module)',
    severity: 'error',
    from: { path: '^server/' },
    to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
  },
  {
    name: 'drivers-only-below-the-file-service',
    comment:
      'only the catalogue (sync), the file service and the composition root (which wires them) reach storage drivers; every door goes through files.forActor',
    severity: 'error',
    from: { path: '^server/', pathNot: '^server/(storage|catalogue|files)/|^server/compose\\.ts$' },
    to: { path: '^server/storage/' },
  },
  {
    name: 'write-gate-only-in-the-file-service',
    comment: 'the live drivers and the write gate (catalogue/io) belong to the file service; the composition root wires them',
    severity: 'error',
    from: { path: '^server/', pathNot: '^server/(catalogue|files)/|^server/compose\\.ts$' },
    to: { path: '^server/catalogue/(io|write-gate|driver-pool)\\.ts$' },
  },
  {
    name: 'storage-ops-only-for-trusted-modules',
    comment: 'place-addressed storage operations skip access checks: protection, thumbnails and text extraction (part of writing) and the root only',
    severity: 'error',
    from: { path: '^server/', pathNot: '^server/(files|protection|thumbs|fulltext)/|^server/compose\\.ts$' },
    to: { path: '^server/files/(internal|storage-ops)\\.ts$' },
  },
  {
    name: 'feature-modules-are-not-peers',
    comment: 'features meet through the file service and the bus, not through each other',
    severity: 'error',
    from: { path: '^server/(uploads|archives|thumbs|protection|replication|docserver|vault)/' },
    to: { path: '^server/(uploads|archives|shares|thumbs|fulltext|protection|replication|docserver|vault)/', pathNot: '^server/$1/' },
  },
  {
    name: 'fulltext-peers-only-archives',
    comment: "office documents are ZIPs: text extraction reads them with the archives module's guarded reader, and meets no other feature",
    severity: 'error',
    from: { path: '^server/fulltext/' },
    to: { path: '^server/(uploads|shares|thumbs|protection|replication|docserver)/' },
  },
  {
    name: 'shares-peers-only-uploads',
    comment: 'the one kept peer edge: file requests are an upload surface and reuse its resumable, owner-bound sessions',
    severity: 'error',
    from: { path: '^server/shares/' },
    to: { path: '^server/(archives|thumbs|protection|replication|docserver)/' },
  },
  {
    name: 'assistant-reaches-files-through-the-file-service',
    comment: "the assistant acts as the asking person: files only through files.forActor, never the catalogue, drivers or another module's tables",
    severity: 'error',
    from: { path: '^server/assistant/' },
    to: { path: '^server/(storage|catalogue|gateways|update|plugins)/|^server/db/migrations/' },
  },
  {
    name: 'plugins-reach-files-through-the-file-service',
    comment:
      "apps act for a person (or a link's creator) through files.forActor and its write gate: never a driver, the catalogue, place-addressed storage ops or another door",
    severity: 'error',
    from: { path: '^server/plugins/' },
    to: { path: '^server/(storage|catalogue|gateways|update|assistant)/|^server/files/(internal|storage-ops)\\.ts$|^server/db/migrations/' },
  },
  {
    name: 'plugin-sandbox-knows-no-services',
    comment: 'the sandbox runs untrusted code: it knows only its protocol and lib; the host API it is handed decides what an app may reach',
    severity: 'error',
    from: { path: '^server/plugins/sandbox/' },
    to: { path: '^server/(db|jobs|events|audit|storage|auth|settings|catalogue|files|uploads|archives|shares|thumbs|protection|replication|docserver)/' },
  },
  {
    name: 'provider-adapters-know-no-files',
    comment: 'provider adapters only speak to a model: no file, share or job service',
    severity: 'error',
    from: { path: '^server/assistant/providers/' },
    to: { path: '^server/(db|jobs|events|audit|storage|auth|settings|catalogue|files|uploads|archives|shares|thumbs|protection|replication|docserver)/' },
  },
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
