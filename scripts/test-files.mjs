// The test runner of one phase, started by scripts/test.mjs with the same --import flags the test files
// need (node:test hands its execArgv to each file's process). It runs the files in the order given:
// `node --test` sorts its files by name, which left the slowest suites (test/e2e, test/http) for the end of
// a run and made its tail; test.mjs orders them slowest first instead.
//   node --import tsx … scripts/test-files.mjs --concurrency=N [--test-name-pattern=RE] [--test-only] FILE…
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { pipeline } from 'node:stream/promises';
import { relative } from 'node:path';
import { OUT, sourcePath } from './test-tree.mjs';

const args = process.argv.slice(2);
const opt = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const unknown = args.filter((a) => a.startsWith('--') && !/^--(concurrency|test-name-pattern)=|^--test-only$/.test(a));
if (unknown.length) {
  console.error(`unsupported flag(s): ${unknown.join(' ')} (supported: --test-name-pattern=RE, --test-only)`);
  process.exit(2);
}
const pattern = opt('test-name-pattern');
const stream = run({
  files: args.filter((a) => !a.startsWith('--')),
  concurrency: Number(opt('concurrency') ?? 3),
  only: args.includes('--test-only'),
  ...(pattern ? { testNamePatterns: [pattern] } : {}),
});
// A failing test anywhere (a file that crashes or hangs fails as a test too) fails the run.
stream.on('test:fail', (d) => {
  if (!d.todo) process.exitCode = 1;
});
/** A compiled file's events (a file that fails as a whole is a test named by its path) under its source's name. */
async function* sourceNames(events) {
  const named = (p) => {
    const r = typeof p === 'string' && p.startsWith('/') ? relative(process.cwd(), p) : p;
    return typeof r === 'string' && r.startsWith(`${OUT}/`) ? sourcePath(r) : p;
  };
  for await (const e of events) {
    if (e.data && typeof e.data === 'object') e.data = { ...e.data, file: named(e.data.file), name: named(e.data.name) };
    yield e;
  }
}
await pipeline(stream, sourceNames, new spec(), process.stdout);
