/**
 * The in-app bell: one row per recipient in `notifications`. `attachBell`
 * turns the spec's events into notifications with their severities; who
 * receives each one is a plain input (the composition root knows admins and
 * owners), so this module knows nothing of users or storages.
 */
import type { Db } from '../db';
import type { TenantScope } from '../db/tenant-tables';
import { NotificationsRepo, type NotificationRow } from './notifications.repo';
import type { EventBus } from './bus';
import type { EventMap, EventName } from './types';

export type Severity = 'info' | 'warning' | 'error';

export interface Notification {
  id: number;
  event: string;
  severity: Severity;
  title: string;
  body: string;
  data: Record<string, unknown>;
  read: boolean;
  created_at: string;
}

export interface NewNotification {
  event: string;
  severity: Severity;
  title: string;
  body: string;
  data?: Record<string, unknown>;
}

/** Rows kept per user; older ones are pruned on insert so a noisy source cannot grow the table without bound. */
export const BELL_KEEP_PER_USER = 500;

export class Bell {
  private repo: NotificationsRepo;
  constructor(
    db: Db,
    private onNew: (t: TenantScope, userId: number, n: Notification) => void = () => {},
  ) {
    this.repo = new NotificationsRepo(db);
  }

  /** Adds one notification for each user id of the tenant (duplicates collapse); returns how many rows were written. */
  async notify(t: TenantScope, userIds: Iterable<number>, n: NewNotification): Promise<number> {
    const row = {
      event: n.event,
      severity: n.severity,
      title: n.title,
      body: n.body,
      data: JSON.stringify(n.data ?? {}),
      created_at: new Date().toISOString(),
    };
    const written = await this.repo.insertFor(t, [...new Set(userIds)], row, BELL_KEEP_PER_USER);
    for (const [uid, r] of written) this.onNew(t, uid, present(r));
    return written.length;
  }

  /** The user's notifications in the tenant, newest first; `before` pages by id; `unreadOnly` filters. */
  async list(s: TenantScope, userId: number, o: { limit?: number; before?: number; unreadOnly?: boolean } = {}): Promise<Notification[]> {
    return (await this.repo.list(s, userId, o)).map(present);
  }

  unreadCount(s: TenantScope, userId: number): Promise<number> {
    return this.repo.unreadCount(s, userId);
  }

  /** Marks the given ids (or all when `ids` is omitted) read; ids of other users or tenants are ignored. Returns rows changed. */
  markRead(s: TenantScope, userId: number, ids?: number[]): Promise<number> {
    return this.repo.markRead(s, userId, ids);
  }
}

function present(r: NotificationRow): Notification {
  return {
    id: r.id,
    event: r.event,
    severity: r.severity,
    title: r.title,
    body: r.body,
    data: JSON.parse(r.data),
    read: r.read_at !== null,
    created_at: r.created_at,
  };
}

/** Who gets a bell entry: admins for system events, an owner for their own things. */
export interface BellRecipients {
  /** The tenant's admins (not disabled). */
  admins(t: TenantScope): Promise<number[]>;
  /** The user a link (drop or share) belongs to. */
  dropOwner(ownerId: number): number[];
}

/** The rendered entry: its recipients (`admins`: every admin too, read only when an event rings for them) and text. */
type Render<E extends EventName> = (p: EventMap[E], r: Pick<BellRecipients, 'dropOwner'>) => { to: number[]; admins?: boolean; n: NewNotification };

/** Why an app update waits for the admin, in words. */
const HELD: Record<EventMap['app_store.update_available']['held'], (p: EventMap['app_store.update_available']) => string> = {
  manual: () => 'Upgrade it under Admin → Apps → Store.',
  major: () => 'It is a new major version, so it is not installed automatically: upgrade it under Admin → Apps → Store.',
  permissions: (p) =>
    `It asks for new permissions (${(p.permissions ?? []).join(', ')}), so it is not installed automatically: approve them under Admin → Apps → Store.`,
  failed: (p) => `The automatic update failed (${p.error ?? 'unknown'}): upgrade it under Admin → Apps → Store.`,
};

/**
 * The events that ring the bell, with their severities (spec: Events). Uploads and updates go to webhooks
 * only, except a document editor's final save (callback status 2): it carries no actor, so admins see it
 * (spec: Document editor integration, rule 2); its force saves (status 6) would ring every minute and do not.
 */
const RULES: { [E in EventName]?: Render<E> } = {
  'file.updated': (p) =>
    p.meta?.origin === 'docserver' && p.meta.status === 2 && !p.actor
      ? {
          to: [],
          admins: true,
          n: {
            event: 'file.updated',
            severity: 'info',
            title: 'Document saved from the editor',
            body: `${p.node.storage}/${p.node.path}`,
            data: { node: p.node, meta: p.meta },
          },
        }
      : { to: [], n: { event: 'file.updated', severity: 'info', title: '', body: '' } },
  'file.infected': (p) => ({
    to: [],
    admins: true,
    n: { event: 'file.infected', severity: 'warning', title: p.title, body: p.body, data: { node: p.node, meta: p.meta } },
  }),
  'drop.received': (p, r) => ({
    to: r.dropOwner(p.owner_id),
    n: {
      event: 'drop.received',
      severity: 'info',
      title: 'Files received',
      body: `${p.files.length} file(s) in ${p.folder}`,
      data: { share_id: p.share_id, folder: p.folder, files: p.files },
    },
  }),
  'share.suspended': (p, r) => ({
    to: r.dropOwner(p.owner_id),
    admins: true,
    n: {
      event: 'share.suspended',
      severity: 'warning',
      title: 'Share link suspended',
      body: `${p.path}: ${p.reason === 'addresses' ? `${p.addresses ?? 'too many'} different addresses within an hour` : 'a download accelerator opened many parallel ranges'}. Re-enable it under Links.`,
      data: { share_id: p.share_id, path: p.path, reason: p.reason },
    },
  }),
  'storage.offline': (p) => ({
    to: [],
    admins: true,
    n: {
      event: 'storage.offline',
      severity: 'warning',
      title: `Storage ${p.name} is offline`,
      body: `${p.reason}. Its files stay listed, read-only, until the drive is back.`,
      data: { storage_id: p.storage_id, path: p.path },
    },
  }),
  'storage.online': (p) => ({
    to: [],
    admins: true,
    n: {
      event: 'storage.online',
      severity: 'info',
      title: `Storage ${p.name} is back`,
      body: p.reattached_from ? `Its drive is now mounted elsewhere: re-attached at ${p.path} (was ${p.reattached_from}).` : `Its drive is back at ${p.path}.`,
      data: { storage_id: p.storage_id, path: p.path, reattached_from: p.reattached_from ?? null },
    },
  }),
  'storage.volume_mismatch': (p) => ({
    to: [],
    admins: true,
    n: {
      event: 'storage.volume_mismatch',
      severity: 'error',
      title: `A different drive is at the place of storage ${p.name}`,
      body: p.reason,
      data: { storage_id: p.storage_id, path: p.path, expected: p.expected, found: p.found },
    },
  }),
  update_available: (p) => ({
    to: [],
    admins: true,
    n: {
      event: 'update_available',
      severity: p.severity === 'security' ? 'warning' : 'info',
      title: `Version ${p.version} is available`,
      body: p.notes ?? '',
      data: { version: p.version, notes_url: p.notes_url },
    },
  }),
  'app_store.update_available': (p) => ({
    to: [],
    admins: true,
    n: {
      event: 'app_store.update_available',
      severity: p.held === 'failed' ? 'warning' : 'info',
      title: `${p.name} ${p.version} is available`,
      body: `${p.installed} is installed. ${HELD[p.held](p)}`,
      data: {
        app_id: p.app_id,
        kind: p.kind ?? 'app',
        store: p.store,
        installed: p.installed,
        version: p.version,
        held: p.held,
        permissions: p.permissions ?? [],
      },
    },
  }),
  'app_store.licences_unchecked': (p) => ({
    to: [],
    admins: true,
    n: {
      event: 'app_store.licences_unchecked',
      severity: 'warning',
      title: `Licences from ${p.name ?? p.url} have not been checked for 30 days`,
      body: `Its revocation list could not be read since ${p.since ?? 'it was connected'} (${p.error}). Apps keep running on the licences they have.`,
      data: { store: p.store, url: p.url, since: p.since },
    },
  }),
  'user.mfa_reset': (p) => ({
    to: [p.user_id],
    n: {
      event: 'user.mfa_reset',
      severity: 'warning',
      title: 'Two-factor sign-in was reset',
      body: 'An administrator removed your second factors. Set them up again under Account security.',
      data: { by: p.by },
    },
  }),
  update_applied: (p) => ({
    to: [],
    admins: true,
    n: {
      event: 'update_applied',
      severity: 'info',
      title: `Updated to ${p.to}`,
      body: p.restart_required ? 'A restart is required.' : '',
      data: { from: p.from, to: p.to },
    },
  }),
};

/** Replication events are announced by name (their module may not exist yet); these are their severities. */
export const EXTRA_SEVERITIES: Record<string, Severity> = {
  replica_fail: 'warning',
  primary_read_fail: 'error',
  replica_reconcile_done: 'info',
  replica_status_report: 'info',
};

/**
 * Subscribes the bell to the bus. Returns the unsubscribe. It rings in the event's tenant, for that tenant's
 * admins and owners (docs/tenants.md).
 */
export function attachBell(bus: EventBus, bell: Bell, recipients: BellRecipients): () => void {
  const offs = Object.entries(RULES).map(([event, render]) =>
    bus.on(event as EventName, async (p, m) => {
      const { to, admins, n } = (render as Render<EventName>)(p as never, recipients);
      const all = admins ? [...to, ...(await recipients.admins(m.tenant))] : to;
      if (all.length) await bell.notify(m.tenant, all, n);
    }),
  );
  offs.push(
    bus.on('*', async (p, m) => {
      const severity = EXTRA_SEVERITIES[m.event];
      if (!severity) return;
      const body = p as { title?: string; body?: string; message?: string };
      await bell.notify(m.tenant, await recipients.admins(m.tenant), {
        event: m.event,
        severity,
        title: body.title ?? m.event,
        body: body.body ?? body.message ?? '',
        data: p as Record<string, unknown>,
      });
    }),
  );
  return () => offs.forEach((off) => off());
}
