/**
 * CPU time this process has used, measured, not assumed: every thread of the
 * process (process.cpuUsage), the children it already reaped (their time is
 * folded into ours by the kernel) and the background children still running
 * (read from /proc/<pid>/stat, Linux only). The governor (jobs/governor.ts)
 * turns the differences into a CPU rate. Also lowers the OS priority of
 * background children and threads.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { ChildProcess } from 'node:child_process';

/** Nice value of background work: below requests, above nothing the user runs. */
export const BACKGROUND_NICE = 10;
/** Linux clock ticks per second (USER_HZ); 100 on every mainstream kernel. */
const TICKS_PER_S = 100;
const hasProc = process.platform === 'linux';
const live = new Set<number>();

/** Fields 14-17 of /proc/<pid>/stat (utime, stime, cutime, cstime) in seconds, or null when the process is gone. */
export function procStatCpu(pid: number | 'self'): { own: number; children: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(f[i - 3]) / TICKS_PER_S;
  return { own: n(14) + n(15), children: n(16) + n(17) };
}

/**
 * Cumulative CPU seconds of this process, its reaped children and its live
 * background children. Ours is read before the children's: a child reaped in
 * between is missed once and counted at the next reading, never twice.
 */
export function processCpuSeconds(): number {
  const u = process.cpuUsage();
  let total = (u.user + u.system) / 1e6;
  if (!hasProc) return total;
  total += procStatCpu('self')?.children ?? 0;
  for (const pid of live) {
    const c = procStatCpu(pid);
    if (c) total += c.own + c.children;
  }
  return total;
}

/**
 * A child started for background work (a thumbnail tool, a virus scan): it
 * runs at low priority and its CPU counts while it runs (after it exits the
 * kernel adds it to ours). Returns the child.
 */
export function adoptBackgroundChild<C extends ChildProcess>(child: C): C {
  const pid = child.pid;
  if (!pid) return child;
  try {
    setPriority(pid, BACKGROUND_NICE);
  } catch {
    // The child is already gone (its exit is reported elsewhere) or the OS refuses: it just runs at our priority.
  }
  child.once('exit', countBackgroundPid(pid));
  return child;
}

/**
 * Counts the CPU of a background process this one did not start itself (a tool the launcher started,
 * lib/tool-launcher.ts) until the returned function is called. The launcher was counted first, and the set
 * is read in that order: a tool it reaps between the two readings is missed once, never counted twice.
 */
export function countBackgroundPid(pid: number): () => void {
  live.add(pid);
  return () => live.delete(pid);
}

/**
 * Lowers the priority of the calling thread only. On Linux a thread has its
 * own nice value (setpriority with its thread id); elsewhere the call would
 * lower the whole process, requests included, so it does nothing there.
 */
export function lowerThisThread(): void {
  if (!hasProc) return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (tid > 0) setPriority(tid, BACKGROUND_NICE);
  } catch {
    // No /proc mounted, or a sandbox that forbids it: the thread keeps normal priority.
  }
}

const lowered = new Set<number>();
/** Threads seen with another name: not read again until the next full check (thread ids are reused). */
const others = new Set<number>();
let lastScan = 0;
let lastFull = 0;

/**
 * Lowers the priority of this process's threads named `name` (Linux), such
 * as libvips's decoder threads. Their pool outlives one image, so one scan a
 * second finds new ones soon enough, and threads already known (lowered, or
 * named otherwise) are skipped: called after every thumbnail, the scan read
 * every thread's name each time (0.77 s of the main thread in one indexing
 * phase of bench/fulltext-load).
 */
export function lowerThreadsNamed(name: string): void {
  if (!hasProc) return;
  const now = Date.now();
  if (now - lastScan < 1000) return;
  lastScan = now;
  if (now - lastFull > 60_000) {
    others.clear();
    lastFull = now;
  }
  try {
    for (const entry of readdirSync('/proc/self/task')) {
      const tid = Number(entry);
      if (lowered.has(tid) || others.has(tid)) continue;
      if (readFileSync(`/proc/self/task/${entry}/comm`, 'latin1').trim() !== name) {
        others.add(tid);
        continue;
      }
      setPriority(tid, BACKGROUND_NICE);
      lowered.add(tid);
    }
  } catch {
    // A thread ended during the scan, or /proc is not readable: the next scan tries again.
  }
}
