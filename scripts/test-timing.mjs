// Loaded (--import) into every test file's process by scripts/test.mjs: on exit, appends the file's
// wall time (from process start, so loading the sources counts) and its CPU time to TEST_TIMINGS_FILE as
// a JSON line, named by its source (a compiled file's .ts). The CPU time is the process's own plus that of
// the children it has reaped (child servers, Chromium, CLIs): with the wall times it says whether a phase
// is bound by the cores (more files at a time would not help) or by waiting (they would).
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { sourcePath } from './test-tree.mjs';

/** Clock ticks of this process's reaped children (`cutime` + `cstime` of /proc/self/stat), 0 where there is no /proc. */
function childrenCpuMs() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5), counted from the state (field 3) at index 0; USER_HZ is 100 on Linux.
    return (Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return 0;
  }
}

const out = process.env.TEST_TIMINGS_FILE;
if (out && process.env.NODE_TEST_CONTEXT && isMainThread) {
  process.once('exit', (code) => {
    const file = sourcePath(relative(process.cwd(), process.argv[1] ?? ''));
    const own = process.cpuUsage();
    const cpuMs = Math.round((own.user + own.system) / 1000 + childrenCpuMs());
    appendFileSync(out, `${JSON.stringify({ file, ms: Math.round(performance.now()), cpuMs, ok: code === 0 })}\n`);
  });
}
