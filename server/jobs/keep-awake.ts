/**
 * Whether the computer should stay awake, and why: while transfers run (a
 * public download, an upload) or a long op a person waits on (the kinds
 * registered with `keepsAwake`), the server asks its host for a sleep
 * inhibitor with `{type: 'inhibit', active, reasons}` and drops it when the
 * last one ends (docs/server-host-protocol.md). The host holds the OS
 * blocker, bounds it in time and defers its self-update while it is asked.
 * Also the `sleep_inhibitor` section of the admin status.
 */
import type { InhibitHostMessage, InhibitReason, Operation } from '../contract';
import type { JobQueue } from './queue';

/** Changes closer together than this are sent as one message (a burst of small transfers). */
const SETTLE_MS = 250;

export interface KeepAwakeStatus {
  active: boolean;
  /** When the current stretch began (ISO), null while inactive. */
  since: string | null;
  reasons: InhibitReason[];
  /** Queued and running long ops: what a crash or a restart resumes from its journal. */
  resumable_ops: Array<Pick<Operation, 'id' | 'kind' | 'status' | 'progress' | 'bytes_done' | 'bytes_total' | 'message' | 'attempts'>>;
}

export class KeepAwake {
  private last = '';
  private since: string | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly queue: Pick<JobQueue, 'runningKeepingAwake' | 'liveKeepingAwake'>,
    /** Transfers in flight (http/middlewares/activity.ts). */
    private readonly transfers: () => number,
    private readonly send: (m: InhibitHostMessage) => void,
  ) {}

  /** Why the computer should stay awake now (empty: it may sleep). */
  reasons(): InhibitReason[] {
    const n = this.transfers();
    return [...(n > 0 ? [{ kind: 'transfers', count: n }] : []), ...this.queue.runningKeepingAwake()];
  }

  /** Something that counts may have started or ended: tells the host once things settle, when the answer changed. */
  changed(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, SETTLE_MS);
    this.timer.unref();
  }

  /** Sends the current state now if it differs from the last one sent (also the first message after `ready`). */
  flush(): void {
    const reasons = this.reasons();
    const msg: InhibitHostMessage = { type: 'inhibit', active: reasons.length > 0, reasons };
    const key = JSON.stringify(msg);
    if (key === this.last) return;
    this.last = key;
    this.since = msg.active ? (this.since ?? new Date().toISOString()) : null;
    this.send(msg);
  }

  async status(): Promise<KeepAwakeStatus> {
    const reasons = this.reasons();
    const active = reasons.length > 0;
    return {
      active,
      since: active ? this.since : null,
      reasons,
      resumable_ops: (await this.queue.liveKeepingAwake()).map(({ id, kind, status, progress, bytes_done, bytes_total, message, attempts }) => ({
        id,
        kind,
        status,
        progress,
        bytes_done,
        bytes_total,
        message,
        attempts,
      })),
    };
  }

  /** Stops the pending message (shutdown). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
