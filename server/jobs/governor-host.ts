/**
 * The governor's state for a desktop host's tray (docs/server-host-protocol.md):
 * checked every 2 s and sent as a `governor` message only when what the tray
 * shows changes (CPU counted in steps of 10 %), so a busy backfill does not
 * turn into a stream of messages.
 */
import type { GovernorHostMessage } from '../contract';
import { hostLine } from '../lib/host-line';
import type { Governor } from './governor';

const EVERY_MS = 2000;
const CPU_STEP = 10;

/** Starts sending; returns the stop. */
export function governorHostStatus(governor: Governor, send: (m: GovernorHostMessage) => void): () => void {
  const line = hostLine<GovernorHostMessage>(() => {
    const s = governor.status();
    return {
      type: 'governor',
      lanes: s.lanes,
      active: s.active,
      cpu_percent: Math.round(s.cpu_percent / CPU_STEP) * CPU_STEP,
      budget_percent: s.budget_percent,
      paused: s.paused,
      pause_reasons: s.pause_reasons,
      on_battery: s.power.on_battery,
      user_idle: s.power.user_idle,
    };
  }, send);
  line.tick();
  const timer = setInterval(() => line.tick(), EVERY_MS).unref();
  return () => clearInterval(timer);
}
