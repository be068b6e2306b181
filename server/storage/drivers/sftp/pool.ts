/**
 * A small pool of SFTP sessions. SFTP multiplexes requests on one channel, so
 * a session is shared; a new one is opened only while every open session is
 * busy and the pool is below its size. Idle sessions are closed after a while,
 * and a session whose connection dropped leaves the pool, so the next call
 * simply opens a fresh one: no restart is needed after an outage.
 */
import { isConnectionLoss } from './errors';
import type { SftpSession } from './client';

export interface PoolOptions {
  /** Most sessions kept open at once. */
  max: number;
  /** An unused session is closed after this long. */
  idleMs: number;
}

export class SessionPool {
  private sessions: SftpSession[] = [];
  /** Sessions being opened; counted against `max` so a burst of calls does not open a burst of connections. */
  private opening: Array<Promise<SftpSession>> = [];

  constructor(
    private readonly open: () => Promise<SftpSession>,
    private readonly opts: PoolOptions,
  ) {}

  /** A live session marked busy; hand it back with `release`. Fails `storage_unreachable` when none can be opened. */
  async acquire(): Promise<SftpSession> {
    this.sessions = this.sessions.filter((s) => !s.closed);
    const idlest = this.sessions.reduce<SftpSession | undefined>((a, s) => (!a || s.busy < a.busy ? s : a), undefined);
    let session: SftpSession;
    if (idlest && (idlest.busy === 0 || this.sessions.length + this.opening.length >= this.opts.max)) session = idlest;
    else if (this.sessions.length + this.opening.length < this.opts.max) session = await this.grow();
    else session = await this.opening[0];
    if (session.closed) return this.acquire();
    clearTimeout(session.idleTimer);
    session.busy++;
    return session;
  }

  /**
   * A further session for a parallel transfer that already holds `current`:
   * an idle one, or a new one while the pool is below its size. Null instead of
   * sharing a busy session or when opening fails (the transfer then goes on
   * with what it has).
   */
  async acquireSpare(current: SftpSession): Promise<SftpSession | null> {
    this.sessions = this.sessions.filter((s) => !s.closed);
    let spare = this.sessions.find((s) => s !== current && s.busy === 0);
    if (!spare && this.sessions.length + this.opening.length < this.opts.max) spare = await this.grow().catch(() => undefined);
    if (!spare || spare.closed) return null;
    clearTimeout(spare.idleTimer);
    spare.busy++;
    return spare;
  }

  /** Returns a session taken with `acquire`; the last user of a session starts its idle clock. */
  release(session: SftpSession): void {
    session.busy--;
    if (session.busy > 0 || session.closed) return;
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => {
      if (session.busy > 0) return;
      this.sessions = this.sessions.filter((s) => s !== session);
      session.end();
    }, this.opts.idleMs);
    session.idleTimer.unref();
  }

  /**
   * Runs `fn` on a pooled session and keeps the session busy for the caller,
   * who must `release` it (streams hold their session until they close). With
   * `retry`, a failure caused by a connection that dropped (the server
   * restarted, the network blinked) is retried once on a fresh session; use it
   * only for requests that are safe to repeat.
   */
  async hold<T>(fn: (s: SftpSession) => Promise<T>, retry = false): Promise<{ session: SftpSession; value: T }> {
    const session = await this.acquire();
    try {
      return { session, value: await fn(session) };
    } catch (e) {
      this.release(session);
      if (!retry || !isConnectionLoss(e)) throw e;
      session.end();
      return this.hold(fn, false);
    }
  }

  /** Runs `fn` on a pooled session and hands the session back; `retry` as in `hold`. */
  async use<T>(fn: (s: SftpSession) => Promise<T>, retry = false): Promise<T> {
    const { session, value } = await this.hold(fn, retry);
    this.release(session);
    return value;
  }

  /** Ends every session. Idempotent; a later call opens new sessions. */
  close(): void {
    for (const s of this.sessions) s.end();
    this.sessions = [];
  }

  private async grow(): Promise<SftpSession> {
    const pending = this.open();
    this.opening.push(pending);
    try {
      const session = await pending;
      this.sessions.push(session);
      return session;
    } finally {
      this.opening = this.opening.filter((p) => p !== pending);
    }
  }
}
