/**
 * The admin's NFS exports: checked before they are stored (the path is a
 * storage or folder the export's account can open, the client list parses,
 * the key is the account's own), and audited. `validation_failed` names the
 * field at fault.
 */
import { actorTenant, type Actor, type ActorSpec } from '../../auth';
import type { NfsExportView } from '../../contract';
import type { TenantScope } from '../../db';
import { AppError } from '../../errors';
import type { EventBus, RequestMeta } from '../../events';
import { parseAddressList } from '../../lib/net-addr';
import type { GatewayCore } from '../index';
import type { NfsExport, NfsExportFields, NfsExportInput, NfsExportsRepo } from './exports.repo';

/** Codes that mean the path names nothing the export's account may open. */
const PATH_FAULTS = new Set(['not_found', 'forbidden', 'permission_denied', 'bad_path', 'bad_name', 'name_not_allowed', 'reserved_name', 'name_too_long']);

/** `details.value` names the part at fault (one entry of a list), for the form to quote. */
const bad = (field: string, reason: string, value?: string) =>
  new AppError('validation_failed', { field, reason }, { field, reason, ...(value === undefined ? {} : { value }) });

/** Whose rights an export's calls run with: its account (or that account's key) in the export's tenant. */
export const exportSpec = (e: NfsExportInput): ActorSpec =>
  e.key_id === null
    ? { kind: 'person', user_id: e.user_id, tenant_id: e.tenant_id }
    : { kind: 'key', user_id: e.user_id, key_id: e.key_id, tenant_id: e.tenant_id };

export class NfsExports {
  constructor(
    private repo: NfsExportsRepo,
    private core: GatewayCore,
    private restore: (spec: ActorSpec, request: RequestMeta) => Promise<Actor>,
    private bus: EventBus,
  ) {}

  /** What the admin sees of an export: no tenant id; the path a client mounts it by. */
  private view({ tenant_id: _tenant, ...v }: NfsExport): NfsExportView {
    return { ...v, mount_path: this.core.tenantBase({ tenant_id: _tenant }) + v.path };
  }

  /** The exports of tenant `s` (an admin sees their tenant's only). */
  async list(s: TenantScope): Promise<NfsExportView[]> {
    return (await this.repo.list(s)).map((e) => this.view(e));
  }

  /** Adds an export in the admin's tenant: its account must be of that tenant (else `validation_failed`). */
  async add(input: NfsExportFields, by: Actor): Promise<NfsExportView> {
    const s = actorTenant(by);
    const { tenant_id: _t, ...fields } = await this.checked({ ...input, tenant_id: s.tenant_id });
    const e = await this.repo.add(s, fields);
    this.audit('gateway.nfs_export.add', by, e);
    return this.view(e);
  }

  /**
   * Changes an export; a missing id (also one removed while the change was checked) → `not_found`. Only the
   * fields the patch names are written, so two admins changing different fields at once both keep theirs.
   */
  async update(id: number, patch: Partial<NfsExportFields>, by: Actor): Promise<NfsExportView> {
    const now = await this.mine(id, by);
    const { id: _id, created_at: _at, ...fields } = now;
    const next = await this.checked({ ...fields, ...patch });
    const named = Object.fromEntries(Object.keys(patch).map((k) => [k, next[k as keyof NfsExportFields]])) as Partial<NfsExportFields>;
    const e = (await this.repo.update(now, id, named)) ? await this.repo.get(now, id) : null;
    if (!e) throw new AppError('not_found', { id });
    this.audit('gateway.nfs_export.update', by, e);
    return this.view(e);
  }

  /** Removes an export (its clients' handles turn stale); a missing id → `not_found`. */
  async remove(id: number, by: Actor): Promise<void> {
    const e = await this.mine(id, by);
    if (!(await this.repo.remove(e, id))) throw new AppError('not_found', { id });
    this.audit('gateway.nfs_export.remove', by, e);
  }

  /** An export of the admin's tenant; another tenant's is `not_found` like a missing one. */
  private async mine(id: number, by: Actor): Promise<NfsExport> {
    const e = await this.repo.get(actorTenant(by), id);
    if (!e) throw new AppError('not_found', { id });
    return e;
  }

  private async checked(e: NfsExportInput): Promise<NfsExportInput> {
    const clients = e.clients
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean)
      .join(', ');
    if (!clients) throw bad('clients', 'at least one address or range');
    const parsed = parseAddressList(clients);
    if (parsed.bad) throw bad('clients', `not an address or range: ${parsed.bad}`, parsed.bad);
    // The account is read in the export's tenant: another tenant's user or key id is no such account.
    const spec = exportSpec(e);
    let actor: Actor;
    try {
      actor = await this.restore(spec, {});
    } catch {
      throw bad(e.key_id === null ? 'user_id' : 'key_id', 'no such enabled account, or the key is not its own live key');
    }
    if (!e.path.startsWith('/') || e.path.split('/').filter(Boolean).length === 0) throw bad('path', 'a storage or a folder in one');
    const tree = this.core.tree(actor, 'nfs');
    let path: string;
    try {
      const t = tree.files.target(e.path, 'viewer', { passage: true });
      path = t.rel === '' ? `/${t.storage.name}` : `/${t.storage.name}/${t.rel}`;
      if ((await tree.stat(path)).type !== 'dir') throw bad('path', 'a folder, not a file');
    } catch (err) {
      // A path the account cannot open is the path field's fault, so the admin form can show it there.
      if (err instanceof AppError && PATH_FAULTS.has(err.code)) throw bad('path', err.code);
      throw err;
    }
    return { ...e, path, clients };
  }

  private audit(action: string, by: Actor, e: NfsExport): void {
    const who = by.kind === 'system' ? undefined : { id: by.principal.id, email: by.principal.email };
    void this.bus.emit(actorTenant(by), 'audit', {
      action,
      actor: who,
      request: by.kind === 'system' ? undefined : by.request,
      resource: `nfs_export:${e.id}`,
      meta: { path: e.path, clients: e.clients, user_id: e.user_id, key_id: e.key_id, read_only: e.read_only },
    });
  }
}
