/**
 * The load guards of the HTTP side, built once per server: admission control
 * for the heavy read routes, the event-loop delay monitor, and the sections
 * of GET /api/admin/status (event loop, admission, database waits, memory,
 * buffer pool). See docs/architecture.md, "Serving under load".
 */
import { pingDatabase, type Db } from '../db';
import { LoopDelayMonitor } from '../lib/loop-delay';
import { MemorySettle } from '../lib/memory-settle';
import { Admission, type AdmissionOptions } from './middlewares/admission';
import { sendPool } from './send-local';
import { statusRoutes, type StatusSection } from './routes/status.routes';
import type { Mw } from './context';

/** Routes whose cost grows with a folder or an index: they queue at saturation (GET only). */
const HEAVY = new Set(['/api/files/manager', '/api/files/search']);

/**
 * Builds the guards: `heavy` (the middleware to run after authentication),
 * `routes` (the status route, with `extra` sections from other modules), `stop()` (ends the monitors' timers; call at
 * shutdown), and the admission and loop monitors themselves.
 */
export function createHealth(o: { db: Db; admission: AdmissionOptions; extra?: StatusSection[] }) {
  const admission = new Admission(o.admission);
  const loop = new LoopDelayMonitor();
  const settle = new MemorySettle(() => sendPool.takeReleased());
  const gate = admission.middleware();
  const mb = (n: number) => Math.round(n / 1048576);
  const sections: StatusSection[] = [
    ['event_loop', () => loop.snapshot()],
    ['admission', () => admission.stats()],
    ['db', () => ({ ...o.db.waits.snapshot(), write_wait_ms: o.db.waits.waitMs })],
    [
      'memory',
      () => {
        const m = process.memoryUsage();
        return {
          rss_mb: mb(m.rss),
          heap_used_mb: mb(m.heapUsed),
          heap_total_mb: mb(m.heapTotal),
          external_mb: mb(m.external),
          send_pool_idle_mb: mb(sendPool.idleBytes),
          send_held_mb: mb(sendPool.heldBytes),
          settled_after_load: settle.settled,
        };
      },
    ],
    ['uptime_s', () => Math.round(process.uptime())],
    ...(o.extra ?? []),
  ];
  /** Runs after authentication: a signed-in caller's heavy GET waits its turn; anything else passes. */
  const heavy: Mw = (ctx, next) => {
    settle.hit();
    return ctx.method === 'GET' && ctx.state.principal && HEAVY.has(ctx.path) ? gate(ctx, next) : next();
  };
  return { admission, loop, heavy, routes: statusRoutes(sections, () => pingDatabase(o.db)), stop: () => (loop.stop(), settle.stop()) };
}
