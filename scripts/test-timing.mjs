// Loaded (--import) into every test file's process by scripts/test.mjs: on exit, appends the file's
// wall time (from process start, so loading the sources counts) to TEST_TIMINGS_FILE as a JSON line,
// named by its source (a compiled file's .ts).
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { sourcePath } from './test-tree.mjs';

const out = process.env.TEST_TIMINGS_FILE;
if (out && process.env.NODE_TEST_CONTEXT && isMainThread) {
  process.once('exit', (code) => {
    const file = sourcePath(relative(process.cwd(), process.argv[1] ?? ''));
    appendFileSync(out, `${JSON.stringify({ file, ms: Math.round(performance.now()), ok: code === 0 })}\n`);
  });
}
