/**
 * Counts in-flight transfers (public downloads, uploads, raw downloads) and
 * running ops, and tells the host process when the numbers change, so the
 * desktop shell can hold a power-save blocker (docs/server-host-protocol.md).
 */
import { toHost } from '../../lib/host-port';
import type { Mw } from '../context';

const TRANSFER = /^\/(s|d)\/|^\/api\/(files\/raw|files\/upload|share\/[^/]+\/download|public\/)/;

/** `onChange`: told of every start and end of a transfer (the sleep inhibitor, jobs/keep-awake.ts). */
export function trackActivity(runningOps: () => number, onChange: () => void = () => {}): { middleware: Mw; changed(): void; transfers(): number } {
  let transfers = 0;
  let last = '';
  let timer: NodeJS.Timeout | null = null;
  const changed = () => {
    onChange();
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      const msg = { type: 'activity' as const, transfers, ops: runningOps(), syncing: false };
      const key = JSON.stringify(msg);
      if (key !== last) {
        last = key;
        toHost(msg);
      }
    }, 250);
    timer.unref();
  };
  const middleware: Mw = async (ctx, next) => {
    if (!TRANSFER.test(ctx.path)) return next();
    transfers++;
    changed();
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      transfers--;
      changed();
    };
    ctx.res.once('close', end);
    try {
      await next();
    } finally {
      if (!ctx.body || typeof (ctx.body as { pipe?: unknown }).pipe !== 'function') end();
    }
  };
  return { middleware, changed, transfers: () => transfers };
}
