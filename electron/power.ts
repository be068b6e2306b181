/**
 * Keeps the computer awake while a public download, an upload or a long
 * operation runs, and no longer: the blocker follows the server's activity
 * messages and is bounded in time, so a stuck counter cannot keep a laptop
 * awake forever. Background sync alone does not hold it.
 */
import type { Activity } from './types';

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
