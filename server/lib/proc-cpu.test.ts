import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { adoptBackgroundChild, BACKGROUND_NICE, lowerThreadsNamed, processCpuSeconds, procStatCpu } from './proc-cpu';

const linux = process.platform === 'linux';
/** Field 19 of /proc/<pid>/stat: the nice value. */
const niceOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ')[16]);

/** Waits until `pid` has used `seconds` of CPU (the machine may be loaded: CPU time, not wall time, is what counts). */
async function untilUsed(pid: number, seconds: number): Promise<void> {
  const end = Date.now() + 30_000;
  while ((procStatCpu(pid)?.own ?? Infinity) < seconds) {
    if (Date.now() > end) throw new Error(`pid ${pid} did not get ${seconds} s of CPU in 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a live background child counts while it runs and after it exits, at low priority', { skip: !linux && 'needs /proc (Linux)' }, async () => {
  // A real process that burns CPU until it has used 1.2 s of it.
  const child = adoptBackgroundChild(
    spawn(process.execPath, ['-e', 'const c = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; }; while (c() < 1.2);'], {
      stdio: 'ignore',
    }),
  );
  const exited = new Promise((r) => child.once('exit', r));
  assert.equal(niceOf(child.pid!), BACKGROUND_NICE);
  await untilUsed(child.pid!, 0.1);
  const before = processCpuSeconds();
  const childBefore = procStatCpu(child.pid!)!.own;
  await untilUsed(child.pid!, 0.6);
  const during = processCpuSeconds();
  const childUsed = procStatCpu(child.pid!)!.own - childBefore;
  assert.ok(
    during - before >= childUsed - 0.02,
    `the child's CPU shows while it runs (${(during - before).toFixed(2)} s counted, the child used ${childUsed.toFixed(2)} s)`,
  );
  await exited;
  const after = processCpuSeconds();
  assert.ok(after >= during + 0.4, `its remaining CPU counts once it is reaped (${during.toFixed(2)} → ${after.toFixed(2)})`);
  assert.ok(procStatCpu('self')!.children >= 1.15, "the kernel folded the child's time into ours");
});

test("our own threads count: the clock moves with this process's CPU as /proc reports it", { skip: !linux && 'needs /proc (Linux)' }, () => {
  const own = () => procStatCpu('self')!.own;
  const before = processCpuSeconds();
  const procBefore = own();
  while (own() - procBefore < 0.3);
  const used = processCpuSeconds() - before;
  const procUsed = own() - procBefore;
  assert.ok(Math.abs(used - procUsed) <= 0.03, `${used.toFixed(3)} s counted, /proc says ${procUsed.toFixed(3)} s`);
});

test("lowerThreadsNamed: libvips's decoder threads drop to the background priority, the main thread does not", {
  skip: !linux && 'needs /proc (Linux)',
}, async () => {
  const { default: sharp } = await import('sharp');
  await sharp({ create: { width: 2000, height: 1500, channels: 3, background: '#567' } })
    .jpeg()
    .toBuffer();
  const threads = () => readdirSync('/proc/self/task').map((t) => ({ tid: Number(t), comm: readFileSync(`/proc/self/task/${t}/comm`, 'latin1').trim() }));
  const vips = threads().filter((t) => t.comm === 'libvips worker');
  assert.ok(vips.length > 0, 'sharp started libvips worker threads');
  lowerThreadsNamed('libvips worker');
  const nice = (tid: number) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'latin1').split(') ')[1].split(' ')[16]);
  for (const t of vips) assert.equal(nice(t.tid), BACKGROUND_NICE, `thread ${t.tid}`);
  assert.equal(nice(process.pid), 0, 'the event loop keeps its priority');
});
