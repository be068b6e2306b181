/**
 * `npm run bench -- <name> [args]` runs bench/<name>.ts in its own process.
 * `npm run bench -- --list` lists them.
 */
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const names = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'lib.ts'].includes(f) && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
  .map((f) => f.slice(0, -3));
const [name, ...args] = process.argv.slice(2);
if (!name || name === '--list' || !names.includes(name)) {
  console.log(`benchmarks: ${names.sort().join(', ')}\nusage: npm run bench -- <name> [args]`);
  process.exit(name && name !== '--list' ? 1 : 0);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', join(here, `${name}.ts`), ...args], { stdio: 'inherit' });
process.exit(r.status ?? 1);
