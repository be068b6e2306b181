/**
 * Which tenant a request is for (docs/tenants.md, "Selecting a tenant"): every tenant's slug, host names and
 * status, held in memory so that the per-request lookup costs no query. Reloaded after every change here
 * (`changed`), and on the other instances through the change channel, so a suspension stops sessions, keys
 * and links at once.
 */
import { DEFAULT_TENANT, type ChangeChannel, type TenantScope } from '../db';
import { reloadOn } from '../db/channel';
import type { TenantRecordsRepo } from './tenant-records.repo';

const NOTICE = 'tenants.changed';

/** A tenant as a request selects it. */
export interface TenantEntry {
  /** The scope its statements run in (only `tenant_id`: it is passed to the repositories as is). */
  scope: TenantScope;
  slug: string;
  /** Its first host name (lower case), or null: only its `/t/<slug>` prefix selects it. */
  host: string | null;
  suspended: boolean;
  /** What the operator set (docs/tenants.md, "Step 4: quotas"): read at every write, so held here with the status. */
  quotas: Readonly<Record<string, number>>;
}

interface Snapshot {
  bySlug: Map<string, TenantEntry>;
  byHost: Map<string, TenantEntry>;
  byId: Map<number, TenantEntry>;
  active: readonly TenantScope[];
}

const EMPTY: Snapshot = { bySlug: new Map(), byHost: new Map(), byId: new Map(), active: [] };

export class TenantDirectory {
  private snap = EMPTY;
  private channel: ChangeChannel | null = null;

  constructor(private repo: TenantRecordsRepo) {}

  /** Reads every tenant again (at start, after a change, on another instance's notice). */
  async load(): Promise<void> {
    const next: Snapshot = { bySlug: new Map(), byHost: new Map(), byId: new Map(), active: [] };
    const active: TenantScope[] = [];
    for (const t of await this.repo.all()) {
      const e: TenantEntry = {
        scope: Object.freeze({ tenant_id: t.id }),
        slug: t.slug,
        host: t.hostnames[0]?.toLowerCase() ?? null,
        suspended: t.status === 'suspended',
        quotas: t.quotas,
      };
      next.bySlug.set(t.slug, e);
      next.byId.set(t.id, e);
      for (const h of t.hostnames) next.byHost.set(h.toLowerCase(), e);
      if (!e.suspended) active.push(e.scope);
    }
    this.snap = { ...next, active };
  }

  /** The tenant of a `/t/<slug>/` prefix, or undefined. */
  bySlug(slug: string): TenantEntry | undefined {
    return this.snap.bySlug.get(slug);
  }

  /** The tenant whose host names hold `host` (lower case, no port), or undefined. */
  byHost(host: string): TenantEntry | undefined {
    return this.snap.byHost.get(host);
  }

  /** A tenant by id, or undefined (deleted, or not loaded yet). */
  byId(id: number): TenantEntry | undefined {
    return this.snap.byId.get(id);
  }

  /**
   * Where the tenant's links start for someone not on the current request (a mail, the assistant's answer):
   * its first host name with the scheme and port of `installation` (the installation's address), else
   * `installation` followed by `/t/<slug>`. Tenant 1, and a tenant this directory does not know, keep
   * `installation`. An empty `installation` (no public URL and no request) gives the relative `/t/<slug>`,
   * which opens in the tenant from any of the installation's addresses.
   */
  address(t: TenantScope, installation: string): string {
    const e = t.tenant_id === DEFAULT_TENANT.tenant_id ? undefined : this.byId(t.tenant_id);
    if (!e) return installation;
    if (e.host && installation) {
      const u = new URL(installation);
      return `${u.protocol}//${e.host}${u.port ? `:${u.port}` : ''}`;
    }
    return `${installation}/t/${e.slug}`;
  }

  /** Every tenant not suspended, in id order (where a key that says its own tenant may be looked for). */
  active(): readonly TenantScope[] {
    return this.snap.active;
  }

  /** After a write to `tenants`: this instance reloads now, the others on the notice. */
  async changed(): Promise<void> {
    await this.load();
    this.channel?.publish(NOTICE, null);
  }

  attachChannel(channel: ChangeChannel): void {
    this.channel = channel;
    reloadOn(channel, [NOTICE], () => this.load());
  }
}
