// Loaded (--import) into every test file's process by scripts/test.mjs: no file can hang the run.
// - A file still running TEST_FILE_TIMEOUT_S (default 900) after it started fails.
// - A file whose tests are all done but whose process does not exit within TEST_EXIT_GRACE_S
//   (default 20: a child process, server or socket left open) fails.
// Either way it prints what was still open, kills the child processes it finds and exits 1,
// which also runs the 'exit' listeners (test/helpers/postgres.ts stops its clusters there).
// One exception: a process whose tests ended and that holds nothing of its own (no child, socket,
// server, request or referenced handle on its loop) is idle in Node itself. On Node 20 the ESM loader
// thread that tsx registers can keep such a process from exiting (seen ~1 run in 8 of
// uploads-resume.test.ts on PostgreSQL, with gdb: every thread idle). It exits with the tests' own
// verdict: the runner counts each reported failing test whatever the exit code.
import { after } from 'node:test';
import { isMainThread } from 'node:worker_threads';
import { relative } from 'node:path';
import { sourcePath } from './test-tree.mjs';

const fileLimitS = Number(process.env.TEST_FILE_TIMEOUT_S ?? 900);
const exitGraceS = Number(process.env.TEST_EXIT_GRACE_S ?? 20);

/** One line per live handle, detailed for the kinds a test leaves behind. */
function openHandles() {
  const lines = [];
  for (const h of process._getActiveHandles()) {
    const kind = h?.constructor?.name ?? typeof h;
    if (kind === 'ChildProcess') lines.push(`child process ${h.pid}: ${(h.spawnargs ?? []).join(' ').slice(0, 200)}`);
    else if (kind === 'Server') lines.push(`server listening on ${JSON.stringify(h.address())}`);
    else if (kind === 'Socket' || kind === 'TLSSocket') {
      if (h === process.stdout || h === process.stderr || h === process.stdin) continue;
      lines.push(
        h.remotePort
          ? `socket ${h.localAddress}:${h.localPort} -> ${h.remoteAddress}:${h.remotePort}`
          : `pipe/socket (${kind}${h._handle?.fd >= 0 ? ` fd ${h._handle.fd}` : ''})`,
      );
    } else lines.push(kind);
  }
  lines.push(`resources: ${process.getActiveResourcesInfo().join(', ')}`);
  // Worker threads keep the process alive yet appear in neither list above: the diagnostic report names them.
  const report = process.report.getReport();
  lines.push(`libuv, held: ${held(report).join(', ') || 'none'}`);
  for (const w of report.workers ?? []) lines.push(`worker thread ${w.header?.threadId}: holds ${held(w).join(', ') || 'nothing'}`);
  return lines;
}

/** The handle types a diagnostic report shows active and referenced (what keeps that loop running). */
const held = (report) => report.libuv.filter((h) => h.is_active && h.is_referenced).map((h) => h.type);

/** Nothing of the file's own is open: no handle but stdio and timers, no request, nothing held on the loop. */
function holdsNothing() {
  const own = process
    ._getActiveHandles()
    .filter((h) => h !== process.stdout && h !== process.stderr && h !== process.stdin && h?.constructor?.name !== 'Timeout');
  return own.length === 0 && process._getActiveRequests().length === 0 && held(process.report.getReport()).length === 0;
}

function failNow(why) {
  const file = process.argv[1] ? sourcePath(relative(process.cwd(), process.argv[1])) : '(unknown file)';
  console.error(`\n[watchdog] ${file}: ${why}. Still open:\n  ${openHandles().join('\n  ')}`);
  for (const h of process._getActiveHandles()) {
    if (h?.constructor?.name === 'ChildProcess' && h.exitCode === null && h.signalCode === null) {
      try {
        h.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
  process.exit(1);
}

// Only in the per-file child processes: not in the runner that spawns them, nor in a worker thread.
if (process.env.NODE_TEST_CONTEXT && isMainThread) {
  // The runner names only the hook or test a stray rejection came from: its stack (with its awaiting callers) says where.
  process.on('unhandledRejection', (e) => console.error('[watchdog] an unhandled rejection:', e instanceof Error ? e.stack : e));
  setTimeout(() => failNow(`still running after ${fileLimitS} s (TEST_FILE_TIMEOUT_S)`), fileLimitS * 1000).unref();
  after(() => {
    setTimeout(() => {
      if (!holdsNothing()) return failNow(`its tests ended but the process did not exit within ${exitGraceS} s`);
      console.error(
        `\n[watchdog] ${sourcePath(relative(process.cwd(), process.argv[1] ?? ''))}: its tests ended ${exitGraceS} s ago and it holds nothing of its own; exiting with the tests' verdict`,
      );
      process.exit(process.exitCode ?? 0);
    }, exitGraceS * 1000).unref();
  });
}
