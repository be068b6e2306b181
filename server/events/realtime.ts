/**
 * Realtime fan-out to browsers. A connection subscribes to one folder
 * (`<storage id>:<relative folder>`) and to its owner's ops; the write gate's
 * `folder.changed` events and the queue's op changes reach only the matching
 * connections. Transport-agnostic: the HTTP layer adapts it to SSE.
 *
 * A connection belongs to its person's tenant, and a frame goes only to connections of the tenant of the row
 * it tells of (docs/tenants.md, "Every door"): the folder's storage's, the op's, the notice's. Storage and
 * user ids are unique across the installation, so this is a second wall, the one step 2's isolation suite
 * relies on.
 */
import type { TenantScope } from '../db/tenant-tables';

export interface RealtimeFrame {
  event: 'change' | 'op' | 'notification' | 'ping';
  data: unknown;
}

export interface Subscriber {
  /** The tenant of the connection's person. */
  tenant_id: number;
  userId: number;
  isAdmin: boolean;
  /** `<storage id>:<relative folder>`, or null for no folder. */
  folderKey: string | null;
  send(frame: RealtimeFrame): void;
}

export const folderKey = (storageId: number, rel: string): string => `${storageId}:${rel}`;

/**
 * How long a folder's last change frame is kept for a connection that subscribes to it afterwards. A page
 * reads a folder's listing and opens its stream at the same time: a change landing between the listing's
 * read and the subscription reached nobody, and the page showed the folder without it until the next change
 * (no later check finds a difference). Replaying a recent change makes the page read the folder once more.
 */
export const RECENT_CHANGE_MS = 10_000;
/** Folders whose last change is kept at most (a first sync changes thousands). */
const RECENT_MAX = 10_000;

export class RealtimeHub {
  private byFolder = new Map<string, Set<Subscriber>>();
  private byUser = new Map<number, Set<Subscriber>>();
  /** Each folder's last change frame, its tenant and when it was sent, oldest first (re-inserted on every change). */
  private recent = new Map<string, { at: number; tenant_id: number; frame: RealtimeFrame }>();

  constructor(private now: () => number = Date.now) {}

  /** Registers a connection; returns its unsubscribe function. */
  add(s: Subscriber): () => void {
    const add = <K>(m: Map<K, Set<Subscriber>>, k: K) => (m.get(k) ?? m.set(k, new Set()).get(k)!).add(s);
    const del = <K>(m: Map<K, Set<Subscriber>>, k: K) => {
      const set = m.get(k);
      set?.delete(s);
      if (set && set.size === 0) m.delete(k);
    };
    if (s.folderKey) add(this.byFolder, s.folderKey);
    add(this.byUser, s.userId);
    const last = s.folderKey ? this.recent.get(s.folderKey) : undefined;
    // Marked `recent`: a catch-up for a listing read just before, not a change made after the subscription.
    if (last && last.tenant_id === s.tenant_id && this.now() - last.at <= RECENT_CHANGE_MS)
      s.send({ event: last.frame.event, data: { ...(last.frame.data as object), recent: true } });
    return () => {
      if (s.folderKey) del(this.byFolder, s.folderKey);
      del(this.byUser, s.userId);
    };
  }

  /**
   * Sends a frame to every connection of the tenant with that folder open; how many. The frame is kept for
   * connections of the tenant that open the folder soon after (RECENT_CHANGE_MS).
   */
  toFolder(t: TenantScope, key: string, frame: RealtimeFrame): number {
    const now = this.now();
    this.recent.delete(key);
    this.recent.set(key, { at: now, tenant_id: t.tenant_id, frame });
    for (const [k, v] of this.recent) {
      if (this.recent.size <= RECENT_MAX && now - v.at <= RECENT_CHANGE_MS) break;
      this.recent.delete(k);
    }
    let n = 0;
    this.byFolder.get(key)?.forEach((s) => {
      if (s.tenant_id !== t.tenant_id) return;
      s.send(frame);
      n++;
    });
    return n;
  }

  /** Whether a user has a connection on this instance. */
  hasUser(userId: number): boolean {
    return !!this.byUser.get(userId)?.size;
  }

  /** Sends a frame to every connection of a user of the tenant (ops, notifications). */
  toUser(t: TenantScope, userId: number, frame: RealtimeFrame): void {
    this.byUser.get(userId)?.forEach((s) => s.tenant_id === t.tenant_id && s.send(frame));
  }

  get size(): number {
    let n = 0;
    this.byUser.forEach((s) => (n += s.size));
    return n;
  }
}

/** The change-channel notice naming an op that changed on another instance (several instances). */
export const OP_NOTICE = 'op.changed';
export interface OpNotice {
  id: string;
  tenant_id: number;
  owner_id: number;
  visible: boolean;
}
export const isOpNotice = (d: unknown): d is OpNotice =>
  !!d &&
  typeof d === 'object' &&
  typeof (d as OpNotice).id === 'string' &&
  Number.isInteger((d as OpNotice).tenant_id) &&
  Number.isInteger((d as OpNotice).owner_id) &&
  (d as OpNotice).visible === true;
