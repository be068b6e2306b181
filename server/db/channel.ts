/**
 * Change notices between instances sharing one database (docs/operations.md,
 * "Several instances"). On PostgreSQL: `LISTEN/NOTIFY` on one channel over a
 * dedicated connection of its own (never a pooled one: notices arrive while
 * every pooled client is busy), small JSON payloads
 * `{instance, event, data}`; an instance ignores its own. On SQLite there is
 * one instance per database: publishing does nothing.
 *
 * What rides it: the events whose subscribers keep per-process state (the
 * realtime hub's change frames, the listing page cache, the quota cache:
 * `EventBus.onEveryInstance`), and cache invalidations (settings). A notice
 * is a hint, never the data: receivers read the database. Notices sent while
 * the connection was down are lost, so after a reconnect every subscriber is
 * told `resync` (drop what it caches).
 */
import type pg from 'pg';

export const CHANNEL = 'filedock_changes';
/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more. */
const MAX_PAYLOAD = 7900;
const RECONNECT_MS = 1000;

export type ChannelListener = (event: string, data: unknown) => void;

export interface ChangeChannel {
  /** This process's id (random per start); notices it sent come back and are ignored. */
  readonly instanceId: string;
  /** Whether other instances may be listening (PostgreSQL). */
  readonly shared: boolean;
  /** Tells the other instances; fire and forget (a lost notice costs a stale cache until the next change). */
  publish(event: string, data: unknown): void;
  /** Notices from other instances, plus `resync` after the connection came back. */
  subscribe(fn: ChannelListener): () => void;
  close(): Promise<void>;
}

/**
 * Keeps an in-memory copy current across instances: `reload` runs on any of `events` from another instance and
 * on `resync`. A failed read (the database away) keeps the copy until the next notice or resync.
 */
export function reloadOn(channel: ChangeChannel, events: readonly string[], reload: () => Promise<void>, onError: (e: unknown) => void = () => {}): void {
  channel.subscribe((event) => {
    if (event === 'resync' || events.includes(event)) reload().catch(onError);
  });
}

/** SQLite: the only instance; nothing to tell. */
export function localChannel(instanceId: string): ChangeChannel {
  return { instanceId, shared: false, publish() {}, subscribe: () => () => {}, async close() {} };
}

/** PostgreSQL: LISTEN on a connection of its own, reconnecting every second while the database is away. */
export async function openPgChannel(
  url: string,
  instanceId: string,
  log: (msg: string, err?: unknown) => void = () => {},
  applicationName?: string,
): Promise<ChangeChannel> {
  const listeners = new Set<ChannelListener>();
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  // Notices go out one after another (pg deprecates overlapping queries on one client, and order is kept);
  // close() lets the last go out first (a CLI command exits right after its change).
  let sending: Promise<unknown> = Promise.resolve();
  const send = (c: pg.Client, payload: string, onError: (e: unknown) => void) => {
    sending = sending.then(() => c.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]).catch(onError));
  };
  const deliver = (event: string, data: unknown) => {
    for (const fn of [...listeners]) {
      try {
        fn(event, data);
      } catch (e) {
        log(`change notice ${event}: a subscriber failed`, e);
      }
    }
  };
  const connect = async (again: boolean) => {
    const c = await (await import('./pg/connect')).connectPostgres(url, { applicationName });
    c.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      let m: { instance?: string; event?: string; data?: unknown };
      try {
        m = JSON.parse(n.payload);
      } catch {
        return;
      }
      if (m.instance === instanceId || typeof m.event !== 'string') return;
      deliver(m.event, m.data);
    });
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    await c.query(`LISTEN ${CHANNEL}`);
    client = c;
    if (again) {
      log('change notices: connection back; caches resync');
      deliver('resync', null);
    }
  };
  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    void c.end().catch(() => {});
    if (!closed) schedule();
  };
  const schedule = () => {
    retry ??= setTimeout(() => {
      retry = null;
      connect(true).catch(() => !closed && schedule());
    }, RECONNECT_MS);
    retry.unref();
  };
  await connect(false);
  return {
    instanceId,
    shared: true,
    publish(event, data) {
      const payload = JSON.stringify({ instance: instanceId, event, data });
      const c = client;
      if (!c || closed) return;
      if (Buffer.byteLength(payload) > MAX_PAYLOAD) {
        // Too big to notify (a very long path): the others drop their caches instead.
        send(c, JSON.stringify({ instance: instanceId, event: 'resync', data: null }), () => {});
        return;
      }
      send(c, payload, (e) => log(`change notice ${event} not sent`, e));
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await sending;
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
