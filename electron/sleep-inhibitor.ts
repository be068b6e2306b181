/**
 * The OS sleep inhibitor the tray holds while the server asks for it
 * (`{type: 'inhibit', active, reasons}`: transfers, copies, extractions, ZIP
 * builds, backup copies; docs/server-host-protocol.md). One Electron
 * `powerSaveBlocker` at most, bounded in time per busy stretch so a stuck
 * server cannot keep a laptop awake for ever; it re-arms only after the
 * server said it is done. The self-update waits on `whenIdle` (the server's
 * word, not the bound: an install must not cut a copy the bound let sleep).
 */
import type { PowerSaveSurface } from './power';
import type { InhibitReason } from './types';

export interface SleepInhibitorOptions {
  /** Longest continuous hold (default 4 h). */
  maxHoldMs?: number;
  onChange?: () => void;
}

/** How the tray names a reason; an unknown kind shows as sent. */
const LABELS: Record<string, [string, string]> = {
  transfers: ['transfer', 'transfers'],
  'files.transfer': ['copy or move', 'copies or moves'],
  'archive.extract': ['extraction', 'extractions'],
  'archive.add': ['ZIP build', 'ZIP builds'],
  'replica.copy': ['backup copy', 'backup copies'],
};

/** "2 transfers, 1 copy or move". */
export function describeReasons(reasons: readonly InhibitReason[]): string {
  return reasons.map((r) => `${r.count} ${(LABELS[r.kind] ?? [r.kind, r.kind])[r.count === 1 ? 0 : 1]}`).join(', ');
}

/** An `inhibit` message as received: checked like input (it crosses a process boundary). */
export function parseInhibit(m: { active?: unknown; reasons?: unknown }): { active: boolean; reasons: InhibitReason[] } {
  const reasons = Array.isArray(m.reasons)
    ? m.reasons
        .filter((r): r is InhibitReason => !!r && typeof r.kind === 'string' && Number.isSafeInteger(r.count) && r.count > 0)
        .slice(0, 20)
        .map((r) => ({ kind: r.kind.slice(0, 64), count: r.count }))
    : [];
  return { active: m.active === true && reasons.length > 0, reasons };
}

export class SleepInhibitor {
  private id: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Set when the bound expired during the current stretch. */
  private exhausted = false;
  private asked: InhibitReason[] = [];
  private idleWaiters: Array<() => void> = [];
  private readonly maxHoldMs: number;

  constructor(
    private readonly power: PowerSaveSurface,
    private readonly o: SleepInhibitorOptions = {},
  ) {
    this.maxHoldMs = o.maxHoldMs ?? 4 * 3_600_000;
  }

  /** True while the OS blocker is held. */
  get holding(): boolean {
    return this.id !== null;
  }

  /** What the server asked for last (empty: nothing runs). */
  get reasons(): InhibitReason[] {
    return this.asked;
  }

  /** Follows one `inhibit` message; `{active: false}` also when the server stopped or crashed. */
  update(m: { active: boolean; reasons: InhibitReason[] }): void {
    this.asked = m.active ? m.reasons : [];
    if (!m.active) {
      this.exhausted = false;
      this.drop();
      for (const w of this.idleWaiters.splice(0)) w();
    } else if (!this.holding && !this.exhausted) {
      this.id = this.power.start('prevent-app-suspension');
      this.timer = setTimeout(() => {
        this.exhausted = true;
        this.drop();
      }, this.maxHoldMs);
      this.timer.unref?.();
    }
    this.o.onChange?.();
  }

  /** Resolves once the server says nothing it asked for runs any more (at once when it asks for nothing). */
  whenIdle(): Promise<void> {
    if (this.asked.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Releases the blocker (the app quits). Idempotent. */
  release(): void {
    this.update({ active: false, reasons: [] });
  }

  private drop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.id === null) return;
    this.power.stop(this.id);
    this.id = null;
    this.o.onChange?.();
  }
}
