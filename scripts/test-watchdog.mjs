// Loaded (--import) into every test file's process by scripts/test.mjs: no file can hang the run.
// - A file still running TEST_FILE_TIMEOUT_S (default 900) after it started fails.
// - A file whose tests are all done but whose process does not exit within TEST_EXIT_GRACE_S
//   (default 20: a child process, server or socket left open) fails.
// Either way it prints what was still open, kills the child processes it finds and exits 1,
// which also runs the 'exit' listeners (test/helpers/postgres.ts stops its clusters there).
import { after } from 'node:test';
import { isMainThread } from 'node:worker_threads';

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
  return lines.concat(`resources: ${process.getActiveResourcesInfo().join(', ')}`);
}

function failNow(why) {
  const file = process.argv[1] ?? '(unknown file)';
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
  setTimeout(() => failNow(`still running after ${fileLimitS} s (TEST_FILE_TIMEOUT_S)`), fileLimitS * 1000).unref();
  after(() => {
    setTimeout(() => failNow(`its tests ended but the process did not exit within ${exitGraceS} s`), exitGraceS * 1000).unref();
  });
}
