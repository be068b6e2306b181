/**
 * The platform operator's tenants (docs/tenants.md, "Who is who"): create one with its first admin, change
 * its slug, name, host names, quotas and branding, suspend and resume it, delete a suspended one. Tenant 1
 * (the installation's own) is neither suspended nor deleted. Every change is audited and reaches the
 * directory at once (a suspension stops the tenant's sessions, keys and links on the next request).
 */
import { AppError } from '../errors';
import type { EventBus, ActorRef, RequestMeta } from '../events';
import { DEFAULT_TENANT } from '../db';
import type { TenantDirectory } from './tenant-directory';
import type { Brandings } from './brandings';
import type { TenantFields, TenantRecord, TenantRecordsRepo } from './tenant-records.repo';
import type { UsersService } from './users.service';
import type { TenantPurge } from './tenant-purge';

export interface NewTenant extends Omit<TenantFields, 'status'> {
  /** Its first admin, who signs in on the tenant's host or prefix. */
  admin: { email: string; username?: string; password: string };
}

interface Ctx {
  actor: ActorRef | null;
  request?: RequestMeta;
}

export class TenantsService {
  constructor(
    private repo: TenantRecordsRepo,
    private directory: TenantDirectory,
    private users: UsersService,
    private bus: EventBus,
    private brandings: Brandings,
    private purge: Pick<TenantPurge, 'enqueue'>,
  ) {}

  list(): Promise<TenantRecord[]> {
    return this.repo.all();
  }

  /** One tenant; `not_found` when there is none. */
  async get(id: number): Promise<TenantRecord> {
    const t = await this.repo.byId(id);
    if (!t) throw new AppError('not_found', { id });
    return t;
  }

  /**
   * Adds an active tenant and its first admin. `name_taken` (field `slug`) for a slug in use,
   * `validation_failed` (field `hostnames`) for a host name another tenant holds, and the account's own
   * refusals (`email_invalid`, a weak password: `validation_failed`): then no tenant is left behind.
   */
  async create(input: NewTenant, ctx: Ctx): Promise<TenantRecord> {
    this.checkHosts(input.hostnames, null);
    const id = await this.repo.insert(input);
    if (id === undefined) throw new AppError('name_taken', { name: input.slug }, { field: 'slug' });
    try {
      await this.users.create({ tenant_id: id }, { ...input.admin, role: 'admin' }, ctx);
    } catch (e) {
      await this.repo.remove(id);
      throw e;
    }
    await this.reloaded();
    await this.audit('tenant.create', id, ctx, { slug: input.slug });
    return this.get(id);
  }

  /** Changes a tenant (suspending or resuming it with `status`); refusals as `create`'s, `not_found` when gone. */
  async update(id: number, patch: Partial<TenantFields>, ctx: Ctx): Promise<TenantRecord> {
    const before = await this.get(id);
    if (patch.status === 'suspended' && id === DEFAULT_TENANT.tenant_id)
      throw new AppError('validation_failed', { field: 'status', reason: 'the installation’s own tenant' }, { field: 'status' });
    if (patch.hostnames) this.checkHosts(patch.hostnames, id);
    // The JSON names name and colour only; the logo the tenant has stays (it has its own upload).
    if (patch.branding) patch = { ...patch, branding: (await this.brandings.merged({ tenant_id: id }, patch.branding)) as Record<string, string> };
    if (!(await this.repo.update(id, patch))) throw new AppError('name_taken', { name: patch.slug ?? '' }, { field: 'slug' });
    await this.reloaded();
    const action = patch.status && patch.status !== before.status ? (patch.status === 'suspended' ? 'tenant.suspend' : 'tenant.resume') : 'tenant.update';
    await this.audit(action, id, ctx, { fields: Object.keys(patch) });
    return this.get(id);
  }

  /**
   * Deletes a suspended tenant's row and identity rows (`conflict` while it is active; tenant 1 never), then
   * queues the purge of what other modules keep under its id. The caller removes its storages first, through
   * their owner.
   */
  async remove(id: number, ctx: Ctx): Promise<void> {
    const t = await this.get(id);
    if (id === DEFAULT_TENANT.tenant_id || t.status !== 'suspended')
      throw new AppError('conflict', { reason: 'only a suspended tenant is deleted' }, { reason: 'not_suspended' });
    await this.repo.remove(id);
    await this.reloaded();
    await this.audit('tenant.delete', id, ctx, { slug: t.slug });
    await this.purge.enqueue({ tenant_id: id });
  }

  /** After a write to `tenants`: the directory and the brandings read it again (here, and on the other instances). */
  private async reloaded(): Promise<void> {
    await this.directory.changed();
    await this.brandings.load();
  }

  /** Refuses a host name another tenant holds (the directory is current: every write reloads it). */
  private checkHosts(hostnames: string[], self: number | null): void {
    for (const h of hostnames) {
      const holder = this.directory.byHost(h);
      if (holder && holder.scope.tenant_id !== self)
        throw new AppError('validation_failed', { field: 'hostnames', reason: `${h} is another tenant’s` }, { field: 'hostnames' });
    }
  }

  private audit(action: string, id: number, ctx: Ctx, meta: Record<string, unknown>): Promise<void> {
    // Audited on tenant 1, the operator's (docs/tenants.md, "Suspending").
    return this.bus.emit(DEFAULT_TENANT, 'audit', { action, actor: ctx.actor, request: ctx.request, resource: `tenant:${id}`, meta });
  }
}
