// Runs every *.test.ts (unit tests beside the code, suites under test/) with
// Node's own test runner through tsx. Arguments filter files by substring:
//   npm test -- server/auth test/drivers
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const roots = ['server', 'electron', 'test', 'renderer/src', 'bench'];
const files = [];
const walk = (dir) => {
  let names;
  try { names = readdirSync(dir); } catch { return; }
  for (const n of names) {
    if (n === 'node_modules' || n === 'dist') continue;
    const p = join(dir, n);
    if (statSync(p).isDirectory()) walk(p);
    else if (/\.test\.tsx?$/.test(n)) files.push(p);
  }
};
roots.forEach(walk);
const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const selected = files.filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))).sort();
if (selected.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...flags, ...selected],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(r.status ?? 1);
