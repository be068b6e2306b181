import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { runTool } from './run-tool';
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
