/**
 * Supervises the server process: starts it, waits for the ready handshake,
 * restarts it after a crash with exponential backoff, stops retrying when it
 * crashes too often (the breaker: the tray then shows the error), and drains it
 * on quit. The fork function is injected, so the same code runs under Electron
 * and under plain Node tests against the real server.
 */
import { EventEmitter } from 'node:events';
import { parseInhibit } from './sleep-inhibitor';
import type {
  Activity,
  BackupStatus,
  ForkServer,
  GovernorView,
  HostMessage,
  InhibitReason,
  OfflineStorage,
  PowerHostMessage,
  ServerChild,
  ServerMessage,
  ServerSnapshot,
  ServerStatus,
  UplinkView,
} from './types';

export interface ServerHostOptions {
  fork: ForkServer;
  /** Environment of the next start; called at every (re)start so setting changes apply. */
  env: () => Record<string, string>;
  /** How long a start may take before the process is killed and counted as a crash. */
  readyTimeoutMs?: number;
  /** First restart delay; doubles per consecutive crash up to `backoffMaxMs`. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** The breaker trips after `breakerCrashes` crashes within `breakerWindowMs`. */
  breakerCrashes?: number;
  breakerWindowMs?: number;
  /** The bound the server gets for its drain; the host kills it `killGraceMs` after that. */
  drainTimeoutMs?: number;
  killGraceMs?: number;
  /** Receives each output line of the server and the host's own notes. */
  log?: (line: string) => void;
  /** Where output streams go (the rotating log); by default each line goes to `log`. */
  pipeOutput?: (child: ServerChild) => void;
}

/** Exit codes the protocol gives start-up errors that a restart cannot fix (bad config, data dir locked). */
const PERMANENT_EXIT_CODES = new Set([2, 3]);

interface HostEvents {
  state: [ServerSnapshot];
  activity: [Activity];
  backup: [BackupStatus | null];
  storages: [OfflineStorage[]];
  governor: [GovernorView | null];
  uplink: [UplinkView | null];
  inhibit: [{ active: boolean; reasons: InhibitReason[] }];
  notify: [{ event: string; title: string; body: string }];
}

export class ServerHost extends EventEmitter<HostEvents> {
  private readonly o: Required<Omit<ServerHostOptions, 'pipeOutput' | 'log'>> & Pick<ServerHostOptions, 'pipeOutput'> & { log: (l: string) => void };
  private child: ServerChild | null = null;
  private status: ServerStatus = 'stopped';
  private port?: number;
  private url?: string;
  private error?: string;
  private restartInMs?: number;
  private crashTimes: number[] = [];
  private consecutiveCrashes = 0;
  private lastFatal?: string;
  private paused = false;
  /** The last power report and whether the computer sleeps: a restarted server learns both at once. */
  private lastPower: PowerHostMessage | null = null;
  private sleeping = false;
  private timer: NodeJS.Timeout | null = null;
  private waiters: { resolve: (v: { port: number; url: string }) => void; reject: (e: Error) => void }[] = [];
  private exitWaiters: (() => void)[] = [];

  constructor(options: ServerHostOptions) {
    super();
    this.o = {
      readyTimeoutMs: 30_000,
      backoffBaseMs: 1000,
      backoffMaxMs: 30_000,
      breakerCrashes: 5,
      breakerWindowMs: 120_000,
      drainTimeoutMs: 10_000,
      killGraceMs: 5000,
      log: () => undefined,
      ...options,
    };
  }

  /** The current state; a copy. */
  snapshot(): ServerSnapshot {
    return {
      status: this.status,
      port: this.port,
      url: this.url,
      pid: this.child?.pid,
      error: this.error,
      restartInMs: this.restartInMs,
      recentCrashes: this.crashTimes.length,
    };
  }

  /**
   * Starts the server (or resets a tripped breaker and starts again) and
   * resolves with the bound port once it is ready, across restarts. Rejects
   * when the breaker trips or the server fails permanently. When it is already
   * running it resolves at once.
   */
  start(): Promise<{ port: number; url: string }> {
    if (this.status === 'running') return Promise.resolve({ port: this.port!, url: this.url! });
    const ready = new Promise<{ port: number; url: string }>((resolve, reject) => this.waiters.push({ resolve, reject }));
    const fresh = () => {
      this.crashTimes = [];
      this.consecutiveCrashes = 0;
      this.error = undefined;
      this.spawn();
    };
    if (this.status === 'stopped' || this.status === 'error') fresh();
    // A start during a drain waits for the old process to be gone.
    else if (this.status === 'stopping') this.exitWaiters.push(fresh);
    return ready;
  }

  /**
   * Drains the server: it stops accepting, finishes in-flight requests up to
   * `timeoutMs`, and exits; it is killed `killGraceMs` later if it has not.
   * Cancels a pending restart. Resolves once no process runs; idempotent.
   */
  async stop(timeoutMs = this.o.drainTimeoutMs): Promise<void> {
    this.clearTimer();
    this.restartInMs = undefined;
    this.failWaiters(new Error('server stopped'));
    const child = this.child;
    if (!child) {
      if (this.status !== 'error') this.setStatus('stopped');
      return;
    }
    const gone = new Promise<void>((r) => this.exitWaiters.push(r));
    if (this.status !== 'stopping') {
      this.setStatus('stopping');
      child.send({ type: 'drain', timeout_ms: timeoutMs });
      const killer = setTimeout(() => {
        this.o.log(`[host] drain exceeded ${timeoutMs + this.o.killGraceMs} ms; killing pid ${child.pid}`);
        child.kill();
      }, timeoutMs + this.o.killGraceMs);
      void gone.then(() => clearTimeout(killer));
    }
    await gone;
  }

  /** Drains and starts again (a setting such as LAN access changed). */
  async restart(): Promise<{ port: number; url: string }> {
    await this.stop();
    return this.start();
  }

  /** Pauses or resumes background work; remembered and re-sent after every restart. */
  setPaused(paused: boolean): void {
    this.paused = paused;
    this.send({ type: 'pause', paused });
  }

  isPaused(): boolean {
    return this.paused;
  }

  /** Passes power, presence and sleep to the server (its governor); remembered and re-sent after every restart. */
  setPower(m: PowerHostMessage): void {
    if (m.type === 'power') this.lastPower = m;
    else this.sleeping = m.type === 'sleep';
    this.send(m);
  }

  private send(message: HostMessage): void {
    if (this.status === 'running') this.child?.send(message);
  }

  private spawn(): void {
    this.clearTimer();
    this.restartInMs = undefined;
    this.port = undefined;
    this.url = undefined;
    this.lastFatal = undefined;
    let child: ServerChild;
    try {
      child = this.o.fork(this.o.env());
    } catch (e) {
      this.o.log(`[host] fork failed: ${(e as Error).message}`);
      this.onCrash(null, `could not start the server: ${(e as Error).message}`);
      return;
    }
    this.child = child;
    if (this.o.pipeOutput) this.o.pipeOutput(child);
    else for (const s of [child.stdout, child.stderr]) if (s) s.on('data', (d: Buffer) => this.o.log(String(d).trimEnd()));
    this.setStatus('starting');
    this.o.log(`[host] started server pid ${child.pid}`);
    const readyTimer = setTimeout(() => {
      this.o.log(`[host] no ready message within ${this.o.readyTimeoutMs} ms; killing pid ${child.pid}`);
      this.lastFatal = `the server did not start within ${Math.round(this.o.readyTimeoutMs / 1000)} s`;
      child.kill();
    }, this.o.readyTimeoutMs);
    child.onMessage((m) => this.onMessage(child, m, readyTimer));
    child.onExit((code) => {
      clearTimeout(readyTimer);
      this.onExit(child, code);
    });
  }

  private onMessage(child: ServerChild, m: ServerMessage, readyTimer: NodeJS.Timeout): void {
    if (child !== this.child) return;
    switch (m.type) {
      case 'ready': {
        clearTimeout(readyTimer);
        if (this.status !== 'starting') return;
        this.port = m.port;
        this.url = m.url;
        this.consecutiveCrashes = 0;
        this.setStatus('running');
        if (this.paused) child.send({ type: 'pause', paused: true });
        if (this.lastPower) child.send(this.lastPower);
        if (this.sleeping) child.send({ type: 'sleep' });
        const waiters = this.waiters.splice(0);
        for (const w of waiters) w.resolve({ port: m.port, url: m.url });
        return;
      }
      case 'fatal':
        this.lastFatal = m.message;
        this.o.log(`[host] server fatal: ${m.message}`);
        return;
      case 'activity':
        this.emit('activity', { transfers: Number(m.transfers) || 0, ops: Number(m.ops) || 0, syncing: Boolean(m.syncing) });
        return;
      case 'inhibit':
        this.emit('inhibit', parseInhibit(m));
        return;
      case 'replica':
        this.emit('backup', { linked: Boolean(m.linked), rpoS: Number(m.rpo_s) || 0, warn: Boolean(m.rpo_warn), unresolved: Number(m.unresolved) || 0 });
        return;
      case 'uplink':
        this.emit('uplink', {
          egress_mbps: Number(m.egress_mbps) || 0,
          budget_mbps: Number(m.budget_mbps) || 0,
          suspended_links: Number(m.suspended_links) || 0,
          budgets: Array.isArray(m.budgets)
            ? m.budgets.map((b) => ({
                name: String(b.name),
                used_today: Number(b.used_today) || 0,
                budget_per_day: Number(b.budget_per_day) || 0,
                exhausted: Boolean(b.exhausted),
              }))
            : [],
        });
        return;
      case 'storages':
        this.emit(
          'storages',
          Array.isArray(m.offline)
            ? m.offline.map((s) => ({
                name: String(s.name),
                reason: s.reason ? String(s.reason) : null,
                unplugged: s.volume_state === 'missing',
                foreign: s.volume_state === 'foreign',
              }))
            : [],
        );
        return;
      case 'governor':
        this.emit('governor', {
          lanes: Number(m.lanes) || 0,
          active: Number(m.active) || 0,
          cpu_percent: Number(m.cpu_percent) || 0,
          budget_percent: Number(m.budget_percent) || 0,
          paused: Boolean(m.paused),
          pause_reasons: Array.isArray(m.pause_reasons) ? m.pause_reasons.filter((r) => r === 'user' || r === 'sleep') : [],
          on_battery: Boolean(m.on_battery),
          user_idle: Boolean(m.user_idle),
        });
        return;
      case 'notify':
        this.emit('notify', { event: m.event, title: m.title, body: m.body });
        return;
      case 'stopped':
        return;
    }
  }

  private onExit(child: ServerChild, code: number | null): void {
    if (child !== this.child) return;
    this.child = null;
    this.o.log(`[host] server pid ${child.pid} exited with ${code === null ? 'a signal' : `code ${code}`}`);
    this.emit('activity', { transfers: 0, ops: 0, syncing: false });
    this.emit('backup', null);
    this.emit('storages', []);
    this.emit('governor', null);
    this.emit('uplink', null);
    this.emit('inhibit', { active: false, reasons: [] });
    const waiters = this.exitWaiters.splice(0);
    if (this.status === 'stopping') {
      this.setStatus('stopped');
      for (const w of waiters) w();
      return;
    }
    for (const w of waiters) w();
    const reason = this.lastFatal ?? `the server exited unexpectedly (${code === null ? 'killed' : `code ${code}`})`;
    if (code !== null && PERMANENT_EXIT_CODES.has(code)) {
      this.trip(reason);
      return;
    }
    this.onCrash(code, reason);
  }

  private onCrash(code: number | null, reason: string): void {
    const now = Date.now();
    this.crashTimes = [...this.crashTimes.filter((t) => now - t < this.o.breakerWindowMs), now];
    this.consecutiveCrashes++;
    if (this.crashTimes.length >= this.o.breakerCrashes) {
      this.trip(`${reason}; stopped after ${this.crashTimes.length} crashes`);
      return;
    }
    const delay = Math.min(this.o.backoffBaseMs * 2 ** (this.consecutiveCrashes - 1), this.o.backoffMaxMs);
    this.restartInMs = delay;
    this.error = reason;
    this.o.log(`[host] restarting in ${delay} ms (crash ${this.crashTimes.length} of ${this.o.breakerCrashes}, code ${code})`);
    this.setStatus('backoff');
    this.timer = setTimeout(() => {
      this.timer = null;
      this.spawn();
    }, delay);
  }

  private trip(reason: string): void {
    this.error = reason;
    this.restartInMs = undefined;
    this.o.log(`[host] giving up: ${reason}`);
    this.setStatus('error');
    this.failWaiters(new Error(reason));
  }

  private failWaiters(e: Error): void {
    for (const w of this.waiters.splice(0)) w.reject(e);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private setStatus(status: ServerStatus): void {
    this.status = status;
    if (status === 'running') this.error = undefined;
    this.emit('state', this.snapshot());
  }
}
