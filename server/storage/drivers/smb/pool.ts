/**
 * A counting semaphore: the one bound on how many smbclient processes a
 * storage runs at once. Waiters are served in arrival order.
 */
import { AppError } from '../../../errors';

export class ProcessPool {
  private active = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /**
   * Resolves with a release function once a slot is free. Rejects with
   * `storage_unreachable` when `waitMs` passes first and with `cancelled` when
   * `signal` fires; a rejected waiter holds no slot. Release is idempotent.
   */
  acquire(waitMs: number, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new AppError('cancelled'));
    return new Promise((resolve, reject) => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.active--;
        this.waiters.shift()?.();
      };
      const grant = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.active++;
        resolve(release);
      };
      const giveUp = (err: AppError) => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        signal?.removeEventListener('abort', onAbort);
        clearTimeout(timer);
        reject(err);
      };
      const onAbort = () => giveUp(new AppError('cancelled'));
      const timer = setTimeout(() => giveUp(new AppError('storage_unreachable', { reason: 'all smbclient slots busy' })), waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (this.active < this.size) grant();
      else this.waiters.push(grant);
    });
  }
}
