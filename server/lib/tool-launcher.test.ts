import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toolLauncher } from './tool-launcher';
import { BACKGROUND_NICE } from './proc-cpu';
import { runTool, runToolOutput } from './run-tool';
import { pdfWith } from '../../test/helpers/documents';
import { needTool, tempDir } from '../../test/helpers/tools';

const never = () => new AbortController().signal;
/** Whether `pid` runs (a zombie waiting for a reaper that may never come in a container does not). */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1][0] !== 'Z';
  } catch {
    return false;
  }
};
/** Field 19 of /proc/<pid>/stat: the nice value. */
const niceOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ')[16]);
/** The pids a script appended to `file` so far. */
const pidsIn = (file: string): number[] => {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
/** Waits (generously: the machine may be loaded) until `ok()` holds. */
async function until(ok: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
/** The pid a script wrote to `file`, once it did. */
async function pidIn(file: string): Promise<number> {
  await until(() => pidsIn(file).length > 0, `a pid in ${file}`);
  return pidsIn(file)[0];
}

test('output, stderr and exit codes come back from the launcher; a missing program is ENOENT', async () => {
  const ok = await runToolOutput('sh', ['-c', 'printf "a\\nb"; echo warn >&2'], { signal: never(), maxBytes: 100 });
  assert.deepEqual([ok.stdout.toString(), ok.stderr, ok.capped], ['a\nb', 'warn', false]);
  await assert.rejects(
    runToolOutput('sh', ['-c', 'echo one >&2; echo two >&2; exit 3'], { signal: never(), maxBytes: 10 }),
    /^Error: sh exited with 3: one \| two$/,
  );
  await assert.rejects(runTool('sh', ['-c', 'kill -TERM $$'], { signal: never() }), /sh exited with SIGTERM/);
  await assert.rejects(runTool('/nonexistent/tool', [], { signal: never() }), (e: NodeJS.ErrnoException) => e.code === 'ENOENT');
  const t = tempDir();
  try {
    const cwd = await runToolOutput('sh', ['-c', 'pwd; echo "$FD_X"'], {
      signal: never(),
      maxBytes: 1000,
      cwd: t.dir,
      env: { FD_X: 'given', PATH: process.env.PATH },
    });
    assert.equal(cwd.stdout.toString(), `${t.dir}\ngiven\n`);
  } finally {
    t.cleanup();
  }
});

test('pdftotext through the launcher reads a PDF; several calls run at once', { skip: needTool('pdftotext', 'poppler-utils') ?? false }, async () => {
  const t = tempDir();
  try {
    const files = [0, 1, 2, 3].map((i) => {
      const f = join(t.dir, `d${i}.pdf`);
      writeFileSync(f, pdfWith([`launcherword${i} here`]));
      return f;
    });
    const out = await Promise.all(files.map((f) => runToolOutput('pdftotext', ['-enc', 'UTF-8', f, '-'], { signal: never(), maxBytes: 1 << 20 })));
    out.forEach((o, i) => assert.match(o.stdout.toString(), new RegExp(`launcherword${i} here`)));
  } finally {
    t.cleanup();
  }
});

test('the output cap holds over many frames (a tool writing 8 MiB, 3 MiB kept)', async () => {
  const r = await runToolOutput('sh', ['-c', 'head -c 8388608 /dev/zero | tr "\\0" x'], { signal: never(), maxBytes: 3 << 20 });
  assert.equal(r.capped, true);
  assert.equal(r.stdout.length, 3 << 20);
  assert.ok(r.stdout.every((b) => b === 0x78));
});

test("a time limit and a cancel kill the tool's whole group, grandchildren included", async () => {
  const t = tempDir();
  try {
    // A tool whose child outlives it unless its group is killed.
    const script = (pidFile: string) => `sleep 60 & echo $! > ${pidFile}; wait`;
    const started = Date.now();
    const timed = runTool('sh', ['-c', script(join(t.dir, 'a'))], { signal: never(), timeoutMs: 500 });
    await assert.rejects(timed, (e: Error & { code?: string }) => e.code === 'timeout' && /sh ran past 500 ms/.test(e.message));
    assert.ok(Date.now() - started < 15_000);
    const a = await pidIn(join(t.dir, 'a'));
    await until(() => !alive(a), "the timed-out tool's grandchild is killed");

    const ac = new AbortController();
    const cancelled = runTool('sh', ['-c', script(join(t.dir, 'b'))], { signal: ac.signal });
    const b = await pidIn(join(t.dir, 'b'));
    // Tools run at background priority (the launcher itself does not: it would hold every start).
    await until(() => toolLauncher.tools.length === 1 && niceOf(toolLauncher.tools[0]) === BACKGROUND_NICE, 'the tool runs at background priority');
    assert.equal(niceOf(toolLauncher.pid!), niceOf(process.pid));
    ac.abort(new Error('cancelled by the service'));
    await assert.rejects(cancelled, /cancelled by the service/);
    await until(() => !alive(b), "the cancelled tool's grandchild is killed");
  } finally {
    t.cleanup();
  }
});

test('the launcher killed mid-call: the call is retried once; killed twice it fails clearly; the next call works', async () => {
  const t = tempDir();
  try {
    await runTool('true', [], { signal: never() });
    const first = toolLauncher.pid!;
    // Killed once: the call runs again on a new launcher and succeeds; the first run's tool is killed.
    const once = runToolOutput('sh', ['-c', `echo $$ >> ${join(t.dir, 'once')}; sleep 1; echo done`], { signal: never(), maxBytes: 100 });
    const tool = await pidIn(join(t.dir, 'once'));
    await until(() => toolLauncher.tools.includes(tool), 'the service knows the tool');
    process.kill(first, 'SIGKILL');
    assert.equal((await once).stdout.toString(), 'done\n');
    assert.notEqual(toolLauncher.pid, first);
    await until(() => !alive(tool), 'the tool of the dead launcher is killed');

    // Killed at each attempt: a clear error.
    const file = join(t.dir, 'twice');
    const twice = runTool('sh', ['-c', `echo $$ >> ${file}; sleep 30`], { signal: never() });
    for (const n of [1, 2]) {
      // Killed once the service knows the tool: one started but not yet reported is not killed (docs/fulltext.md).
      await until(() => pidsIn(file).length >= n && toolLauncher.tools.includes(pidsIn(file)[n - 1]), `attempt ${n} started`);
      process.kill(toolLauncher.pid!, 'SIGKILL');
    }
    await assert.rejects(twice, /the tool launcher exited \(SIGKILL\) while sh ran, twice/);
    for (const pid of pidsIn(file)) await until(() => !alive(pid), `tool ${pid} is killed`);

    assert.equal((await runToolOutput('echo', ['after'], { signal: never(), maxBytes: 100 })).stdout.toString(), 'after\n');
  } finally {
    t.cleanup();
  }
});

test('no orphans: the service killed with SIGKILL takes the launcher and its tools with it', async () => {
  const t = tempDir();
  try {
    const pids = join(t.dir, 'pids');
    // A small "service": starts a tool through the launcher and writes both pids, then waits.
    const service = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import { toolLauncher } from ${JSON.stringify(new URL('./tool-launcher.ts', import.meta.url).href)};
         import { runTool } from ${JSON.stringify(new URL('./run-tool.ts', import.meta.url).href)};
         import { writeFileSync } from 'node:fs';
         runTool('sh', ['-c', 'echo $$ > ${pids}.tool; exec sleep 60'], { signal: new AbortController().signal }).catch(() => {});
         setTimeout(() => writeFileSync(${JSON.stringify(pids)}, String(toolLauncher.pid)), 100);
         setInterval(() => {}, 1000);`,
      ],
      { stdio: 'inherit', cwd: join(import.meta.dirname, '../..') },
    );
    const launcher = await pidIn(pids);
    const tool = await pidIn(`${pids}.tool`);
    assert.ok(alive(launcher) && alive(tool));
    service.kill('SIGKILL');
    await until(() => !alive(launcher), 'the launcher exits after its service');
    await until(() => !alive(tool), "the launcher's tool is killed");
  } finally {
    t.cleanup();
  }
});
