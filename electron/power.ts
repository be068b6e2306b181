/**
 * Power on the desktop. PowerReporter tells the server about battery,
 * presence and sleep, for its governor of background work
 * (docs/server-host-protocol.md); keeping the computer awake is
 * sleep-inhibitor.ts, on the server's word.
 */
import type { PowerHostMessage } from './types';

/** The part of Electron's powerSaveBlocker the sleep inhibitor uses. */
export interface PowerSaveSurface {
  start(type: 'prevent-app-suspension'): number;
  stop(id: number): boolean;
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

  constructor(
    private readonly monitor: PowerMonitorSurface,
    private readonly send: (m: PowerHostMessage) => void,
  ) {}

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
