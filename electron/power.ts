/**
 * Power on the desktop. PowerGuard keeps the computer awake while a public download, an upload or a long
 * operation runs, and no longer: the blocker follows the server's activity
 * messages and is bounded in time, so a stuck counter cannot keep a laptop
 * awake forever. Background sync alone does not hold it. PowerReporter tells
 * the server about battery, presence and sleep, for its governor of
 * background work (docs/server-host-protocol.md).
 */
import type { Activity, PowerHostMessage } from './types';

/** The part of Electron's powerSaveBlocker used here. */
export interface PowerSaveSurface {
  start(type: 'prevent-app-suspension'): number;
  stop(id: number): boolean;
}

export interface PowerGuardOptions {
  /** Longest continuous hold; after it the blocker is released until activity drops to zero and rises again. */
  maxHoldMs?: number;
  onChange?: (holding: boolean) => void;
}

export class PowerGuard {
  private id: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Set when the bound expired during the current busy stretch. */
  private exhausted = false;
  private readonly maxHoldMs: number;

  constructor(private readonly power: PowerSaveSurface, private readonly o: PowerGuardOptions = {}) {
    this.maxHoldMs = o.maxHoldMs ?? 4 * 3_600_000;
  }

  /** True while the blocker is held. */
  get holding(): boolean {
    return this.id !== null;
  }

  /** Follows one activity message from the server. */
  update(a: Activity): void {
    const busy = a.transfers > 0 || a.ops > 0;
    if (!busy) {
      this.exhausted = false;
      this.release();
    } else if (!this.holding && !this.exhausted) {
      this.id = this.power.start('prevent-app-suspension');
      this.timer = setTimeout(() => {
        this.exhausted = true;
        this.release();
      }, this.maxHoldMs);
      this.timer.unref?.();
      this.o.onChange?.(true);
    }
  }

  /** Releases the blocker (server stopped, app quitting). Idempotent. */
  release(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.id === null) return;
    this.power.stop(this.id);
    this.id = null;
    this.o.onChange?.(false);
  }
}

/** The part of Electron's powerMonitor the power reporter reads. */
export interface PowerMonitorSurface {
  isOnBatteryPower(): boolean;
  /** Seconds since the last keyboard or mouse input. */
  getSystemIdleTime(): number;
}

/** The user counts as away after this long without input (or while the screen is locked). */
export const USER_IDLE_AFTER_S = 120;

/**
 * The `power` message for what the OS reports: pure, so the mapping is tested
 * under Node. The user is idle when the screen is locked or no input came
 * for USER_IDLE_AFTER_S seconds.
 */
export function powerMessage(o: { onBattery: boolean; idleSeconds: number; locked: boolean }): PowerHostMessage {
  return { type: 'power', on_battery: o.onBattery, user_idle: o.locked || o.idleSeconds >= USER_IDLE_AFTER_S };
}

/** The Electron powerMonitor events the reporter follows. */
export type PowerEvent = 'on-battery' | 'on-ac' | 'suspend' | 'resume' | 'lock-screen' | 'unlock-screen' | 'poll';

/**
 * Tells the server about power, presence and sleep: `sleep` at suspend,
 * `wake` at resume, and a `power` message whenever battery or idleness
 * changes (idleness has no event: main.ts polls it). Sends only changes.
 */
export class PowerReporter {
  private locked = false;
  private last = '';

  constructor(private readonly monitor: PowerMonitorSurface, private readonly send: (m: PowerHostMessage) => void) {}

  /** Follows one powerMonitor event (or a poll tick). */
  handle(event: PowerEvent): void {
    if (event === 'suspend') return this.send({ type: 'sleep' });
    if (event === 'lock-screen' || event === 'unlock-screen') this.locked = event === 'lock-screen';
    if (event === 'resume') this.send({ type: 'wake' });
    this.report(event === 'resume');
  }

  /** The current power state, sent when it differs from the last one sent (or always with `force`). */
  report(force = false): void {
    const m = powerMessage({ onBattery: this.monitor.isOnBatteryPower(), idleSeconds: this.monitor.getSystemIdleTime(), locked: this.locked });
    const key = JSON.stringify(m);
    if (key === this.last && !force) return;
    this.last = key;
    this.send(m);
  }
}
