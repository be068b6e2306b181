import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { runTool, runToolOutput } from './run-tool';
import { tempDir } from '../../test/helpers/tools';

test('an aborted tool is killed with the processes it started (a launcher like soffice)', async () => {
  const t = tempDir();
  try {
    // A launcher whose child keeps stderr open long after the launcher itself is gone.
    const bin = join(t.dir, 'launcher.sh');
    writeFileSync(bin, '#!/bin/sh\nsleep 60 &\nwait\n');
    chmodSync(bin, 0o755);
    const ac = new AbortController();
    const started = Date.now();
    const run = runTool(bin, [], { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stop')), 200);
    await assert.rejects(run, /stop/);
    assert.ok(Date.now() - started < 5_000, `the run ended ${Date.now() - started} ms after start`);
  } finally {
    t.cleanup();
  }
});

test('a tool writing past the output cap is stopped there, its output kept; a normal exit keeps all', async () => {
  const started = Date.now();
  const endless = await runToolOutput('yes', ['abc'], { signal: new AbortController().signal, maxBytes: 10_000 });
  assert.equal(endless.capped, true);
  assert.equal(endless.stdout.length, 10_000);
  assert.ok(endless.stdout.toString().startsWith('abc\nabc\n'));
  assert.ok(Date.now() - started < 5_000);
  const short = await runToolOutput('echo', ['hello'], { signal: new AbortController().signal, maxBytes: 10_000 });
  assert.deepEqual(short, { stdout: Buffer.from('hello\n'), capped: false, stderr: '' });
  // A tool that exits 0 after a complaint: the complaint comes back.
  const warned = await runToolOutput('sh', ['-c', 'echo out; echo "is not OLE file or Error" >&2'], { signal: new AbortController().signal, maxBytes: 100 });
  assert.deepEqual([warned.stdout.toString(), warned.stderr], ['out\n', 'is not OLE file or Error']);
  await assert.rejects(runToolOutput('false', [], { signal: new AbortController().signal, maxBytes: 10 }), /false exited with 1/);
});
