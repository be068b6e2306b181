// Writes test/suite-times.json from this machine's last whole run (test-timings.json): each phase's files
// that took over 5 s, in seconds. scripts/test.mjs starts the slowest files first from it on a clean clone
// (CI), where no earlier run's timings exist. Refresh it after a CI-like run: node scripts/suite-times.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const { at, files } = JSON.parse(readFileSync('test-timings.json', 'utf8'));
const out = { from: at };
for (const r of files.sort((a, b) => a.file.localeCompare(b.file))) {
  if (r.ms < 5000) continue;
  out[r.phase] ??= {};
  out[r.phase][r.file] = Math.round(r.ms / 1000);
}
writeFileSync('test/suite-times.json', `${JSON.stringify(out, null, 1)}\n`);
console.log(
  `test/suite-times.json: ${Object.values(out)
    .filter((v) => typeof v === 'object')
    .reduce((n, v) => n + Object.keys(v).length, 0)} files`,
);
