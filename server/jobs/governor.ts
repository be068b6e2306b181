/**
 * The governor of background work (docs/desktop.md, "Governor"). Every
 * background unit (a thumbnail, a virus scan, a replication copy, a sync walk,
 * a ZIP warm-up) takes a lane before it starts and gives it back when it ends.
 * A lane is granted only while
 *   - background work is not paused (the user's pause, or the computer asleep),
 *   - fewer units run than the current lane count (one on battery or while the
 *     user is busy, else up to MAX_LANES, fewer while the CPU runs over budget),
 *   - the CPU budget is not overdrawn: measured CPU of the whole process and
 *     its background children, against `budget` percent of one core.
 * Nothing running is ever stopped or slowed: the governor only decides when the
 * next unit may start, so a job runs exactly once whatever the power state does.
 *
 * Units come in two classes. `cpu` units (thumbnails, scans, hashing audits,
 * walks) obey all of the above. `io` units (replication copies: small, waiting
 * on disks and networks, and their delay is data at risk) wait for the pause
 * and the power state's lane cap only: never for the CPU budget nor the lanes
 * it took away. They count as active, so the cap on battery stays one unit in
 * all; their CPU is measured and so holds `cpu` units back.
 */
import type { PowerHostMessage } from '../contract';

/** Lanes at most, on mains power with an idle user and CPU to spare (the queue's own global limit). */
export const MAX_LANES = 4;
const SAMPLE_MS = 250;
/** Readings closer together than this are skipped: over microseconds, CPU time is noise. */
const MIN_SAMPLE_MS = 20;
/** Credit that may be saved up while idle, in seconds of budget: enough that one reading's jitter does not stall starts. */
const BURST_S = 0.25;
/** The window `cpu_percent` is averaged over, and lanes adapt at most once per. */
const WINDOW_MS = 10_000;
const ADAPT_MS = 2_000;
/** Overdraft forgiven at most, in seconds of budget: CPU spent by requests must not starve background work for minutes. */
const MAX_DEBT_S = 5;

export type PowerOverride = '' | 'ac' | 'battery' | 'busy';
export type PauseReason = 'user' | 'sleep';
/** What a unit mostly waits on: the CPU budget binds `cpu` units only. */
export type UnitClass = 'cpu' | 'io';

export interface PowerState {
  on_battery: boolean;
  user_idle: boolean;
  sleeping: boolean;
  /** Where on_battery / user_idle come from: the host's messages, SERVICE_POWER_STATE, or the default (mains, idle). */
  source: 'host' | 'override' | 'default';
}

export interface GovernorStatus {
  lanes: number;
  max_lanes: number;
  active: number;
  waiting: number;
  /** Most units that ran at once since the start. */
  peak_active: number;
  /** CPU of the process and its background children over the last window, in percent of one core. */
  cpu_percent: number;
  window_s: number;
  /** Budget in percent of one core; 0 = no CPU limit. */
  budget_percent: number;
  /** True while starts wait for the CPU budget to recover. */
  over_budget: boolean;
  paused: boolean;
  pause_reasons: PauseReason[];
  power: PowerState;
}

export interface GovernorOptions {
  budgetPercent: number;
  powerOverride?: PowerOverride;
  maxLanes?: number;
  /** Cumulative CPU seconds (lib/proc-cpu processCpuSeconds); injected so the math is testable. */
  cpuSeconds: () => number;
  /** Monotonic milliseconds. */
  now?: () => number;
}

/** Gives the lane back; calling it twice is harmless. */
export type Release = () => void;

interface Waiter {
  cls: UnitClass;
  grant: (r: Release) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class Governor {
  private readonly maxLanes: number;
  private readonly now: () => number;
  private budget: number;
  private lanes: number;
  private active = 0;
  /** Active `cpu` units: the lanes the budget allows bound these. */
  private activeCpu = 0;
  private peak = 0;
  private waiters: Waiter[] = [];
  private pauses = new Set<PauseReason>();
  private power: PowerState;
  /** CPU seconds the budget still allows; saved up to BURST_S only, so idle time buys no long burst. */
  private credit = 0;
  private last: { t: number; cpu: number };
  private samples: Array<{ t: number; cpu: number }> = [];
  private lastAdapt: number;
  /** A start was refused for the budget since the last adaptation. */
  private heldByBudget = false;
  private timer: NodeJS.Timeout | null = null;
  private listeners = new Set<() => void>();

  constructor(private readonly o: GovernorOptions) {
    this.now = o.now ?? (() => performance.now());
    this.maxLanes = Math.max(1, o.maxLanes ?? MAX_LANES);
    this.budget = o.budgetPercent;
    this.lanes = this.maxLanes;
    const override = o.powerOverride ?? '';
    this.power = override
      ? { on_battery: override === 'battery', user_idle: override !== 'busy', sleeping: false, source: 'override' }
      : { on_battery: false, user_idle: true, sleeping: false, source: 'default' };
    this.last = { t: this.now(), cpu: o.cpuSeconds() };
    this.samples.push(this.last);
    this.lastAdapt = this.last.t;
  }

  /** Starts sampling the CPU (the server calls it; tests drive `sample` themselves). */
  start(): void {
    this.timer ??= setInterval(() => this.sample(), SAMPLE_MS).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Called after any change of what the status shows or of whether a unit may start (the queue re-pumps). */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Waits for a lane; rejects with the signal's reason when it aborts first. */
  acquire(signal?: AbortSignal, cls: UnitClass = 'cpu'): Promise<Release> {
    const now = this.tryAcquire(cls);
    if (now) return Promise.resolve(now);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Release>((resolve, reject) => {
      const w: Waiter = { cls, grant: resolve, signal };
      if (signal) {
        w.onAbort = () => {
          this.waiters = this.waiters.filter((x) => x !== w);
          reject(signal.reason);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiters.push(w);
    });
  }

  /** A lane now, or null; never jumps ahead of units of its class already waiting. */
  tryAcquire(cls: UnitClass = 'cpu'): Release | null {
    if (this.waiters.some((w) => w.cls === cls) || !this.mayStart(cls)) return null;
    return this.take(cls);
  }

  /** True while nothing may start (the user's pause, or asleep). */
  get paused(): boolean {
    return this.pauses.size > 0;
  }

  /** The budget in percent of one core (0 = unlimited); applies to the next start. */
  setBudget(percent: number): void {
    this.budget = percent;
    this.changed();
  }

  /** The user's "Pause background work" (host `pause` message, admin). */
  setPaused(paused: boolean): void {
    this.setPause('user', paused);
  }

  /**
   * One message from the host (docs/server-host-protocol.md). Anything
   * malformed is ignored: the host is trusted, but a bad message must not
   * take background work (or the process) down.
   */
  hostMessage(m: PowerHostMessage): void {
    if (m.type === 'sleep' || m.type === 'wake') {
      this.power = { ...this.power, sleeping: m.type === 'sleep' };
      this.setPause('sleep', m.type === 'sleep');
      return;
    }
    if (m.type !== 'power' || typeof m.on_battery !== 'boolean' || typeof m.user_idle !== 'boolean') return;
    if (this.power.source === 'override') return; // SERVICE_POWER_STATE wins (tests, servers on a UPS)
    this.power = { ...this.power, on_battery: m.on_battery, user_idle: m.user_idle, source: 'host' };
    this.changed();
  }

  status(): GovernorStatus {
    this.sample();
    const first = this.samples[0];
    const span = (this.last.t - first.t) / 1000;
    return {
      lanes: this.currentLanes(),
      max_lanes: this.maxLanes,
      active: this.active,
      waiting: this.waiters.length,
      peak_active: this.peak,
      cpu_percent: span > 0 ? Math.round(((this.last.cpu - first.cpu) / span) * 1000) / 10 : 0,
      window_s: Math.round(span * 10) / 10,
      budget_percent: this.budget,
      over_budget: this.budget > 0 && this.credit < 0,
      paused: this.pauses.size > 0,
      pause_reasons: [...this.pauses],
      power: { ...this.power },
    };
  }

  /** Reads the CPU clock (timer, status) and lets waiting work start when that freed capacity. */
  sample(): void {
    const lanes = this.lanes;
    if (this.settle()) this.grantWaiting();
    else if (this.lanes !== lanes) this.notify();
  }

  /**
   * Reads the CPU clock and settles the budget: the budget accrues while time
   * passes, measured CPU spends it. Cheap (a syscall and a few /proc reads);
   * runs on a timer and before every decision. Only updates numbers; says
   * whether a start may now be possible that was not (more lanes, or the
   * overdraft ended), for the caller to act on.
   */
  private settle(): boolean {
    const t = this.now();
    const dt = (t - this.last.t) / 1000;
    if (dt * 1000 < MIN_SAMPLE_MS) return false;
    // Never backwards: a child reaped between two readings is briefly missed, not counted twice.
    const cpu = Math.max(this.last.cpu, this.o.cpuSeconds());
    const wasOver = this.budget > 0 && this.credit < 0;
    if (this.budget > 0) {
      const rate = this.budget / 100;
      this.credit = Math.max(-MAX_DEBT_S * rate, Math.min(BURST_S * rate, this.credit + rate * dt - (cpu - this.last.cpu)));
    }
    this.last = { t, cpu };
    this.samples.push(this.last);
    while (this.samples.length > 2 && t - this.samples[1].t >= WINDOW_MS) this.samples.shift();
    const moreLanes = this.adapt(t);
    const isOver = this.budget > 0 && this.credit < 0;
    return moreLanes || (wasOver && !isOver);
  }

  private laneCap(): number {
    return this.power.on_battery || !this.power.user_idle ? 1 : this.maxLanes;
  }

  private currentLanes(): number {
    return this.pauses.size > 0 ? 0 : Math.min(this.lanes, this.laneCap());
  }

  /** Whether one more unit of `cls` may start now (settles the clock first; grants nothing itself). */
  private mayStart(cls: UnitClass): boolean {
    this.settle();
    if (this.pauses.size > 0 || this.active >= this.laneCap()) return false;
    if (cls === 'io') return true;
    if (this.activeCpu >= this.currentLanes()) return false;
    if (this.budget > 0 && this.credit < 0) {
      this.heldByBudget = true;
      return false;
    }
    return true;
  }

  /**
   * Fewer lanes when starts had to wait for the budget (steady work on fewer
   * lanes beats bursts on many followed by stalls, for requests too); one more
   * when the window used under three quarters of the budget and work waits.
   * Returns whether a lane was added.
   */
  private adapt(t: number): boolean {
    if (t - this.lastAdapt < ADAPT_MS || this.budget <= 0) return false;
    this.lastAdapt = t;
    const first = this.samples[0];
    const span = (t - first.t) / 1000;
    const percent = span > 0 ? ((this.last.cpu - first.cpu) / span) * 100 : 0;
    const before = this.lanes;
    if (this.heldByBudget && this.lanes > 1) this.lanes--;
    else if (!this.heldByBudget && percent < this.budget * 0.75 && this.waiters.some((w) => w.cls === 'cpu') && this.lanes < this.laneCap()) this.lanes++;
    this.heldByBudget = false;
    return this.lanes > before;
  }

  private take(cls: UnitClass): Release {
    const cpu = cls === 'cpu' ? 1 : 0;
    this.active++;
    this.activeCpu += cpu;
    this.peak = Math.max(this.peak, this.active);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active--;
      this.activeCpu -= cpu;
      this.grantWaiting();
      this.notify();
    };
  }

  /** Grants waiting units in order within each class; a class that may not start stops for this pass (no overtaking). */
  private grantWaiting(): void {
    const blocked = new Set<UnitClass>();
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i];
      if (blocked.has(w.cls) || !this.mayStart(w.cls)) {
        blocked.add(w.cls);
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      if (w.onAbort) w.signal!.removeEventListener('abort', w.onAbort);
      w.grant(this.take(w.cls));
    }
    this.notify();
  }

  private setPause(reason: PauseReason, on: boolean): void {
    if (on) this.pauses.add(reason);
    else this.pauses.delete(reason);
    this.changed();
  }

  private changed(): void {
    this.grantWaiting();
  }

  private notify(): void {
    for (const fn of this.listeners) fn();
  }
}
