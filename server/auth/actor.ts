/**
 * Who is acting, and through which door: the one identity every domain
 * service takes (the file service decides access from it, events and audit
 * rows record its `actorRef`).
 *   - `person`: a signed-in account (session cookie or bearer token);
 *   - `link`: a public link's visitor, acting as the link's creator and
 *     confined to the shared item (the visitor stays anonymous in events);
 *   - `key`: a request signed with an API key: its owner's rights, narrowed to
 *     the key's verbs and, when it has one, its folder root;
 *   - `system`: background work with no person behind it (sweeps, scans,
 *     thumbnails); it may reach every storage.
 */
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { ActorRef, RequestMeta } from '../events';
import type { KeyScope } from './keys';
import type { Principal } from './types';

interface Door {
  /** Where the request came from (audit rows). */
  request?: RequestMeta;
}

export interface PersonActor extends Door {
  kind: 'person';
  principal: Principal;
}

export interface LinkActor extends Door {
  kind: 'link';
  /** The link's creator: their access decides. */
  principal: Principal;
  share: { id: number; storage_id: number; rel: string };
}

export interface KeyActor extends Door {
  kind: 'key';
  /** The key's owner: their access and permissions, narrowed by the key. */
  principal: Principal;
  key: KeyScope;
}

export interface SystemActor extends Door {
  kind: 'system';
  /** What runs (`trash.sweep`, `av.scan`, ...), for logs. */
  job: string;
  /**
   * The tenant its work is confined to (an app's scheduled job: the app's tenant); none: every tenant's
   * storages by id, tenant 1's UI paths.
   */
  tenant?: TenantScope;
}

export type Actor = PersonActor | LinkActor | KeyActor | SystemActor;

export const personActor = (principal: Principal, request?: RequestMeta): PersonActor => ({ kind: 'person', principal, request });

export const systemActor = (job: string, tenant?: TenantScope): SystemActor => ({ kind: 'system', job, ...(tenant && { tenant }) });

export const linkActor = (principal: Principal, share: LinkActor['share'], request?: RequestMeta): LinkActor => ({ kind: 'link', principal, share, request });

export const keyActor = (principal: Principal, key: KeyScope, request?: RequestMeta): KeyActor => ({ kind: 'key', principal, key, request });

/**
 * The tenant the actor acts in: its principal's. System work has no principal: bound to a tenant (an app's
 * scheduled job) it acts in that one only; unbound, it reaches a place (a storage id taken from a row) in any
 * tenant and a UI path in tenant 1's (docs/tenants.md, "Step 1: what is left").
 */
export const actorTenant = (a: Actor): TenantScope => (a.kind === 'system' ? (a.tenant ?? DEFAULT_TENANT) : a.principal);

/** The identity events and audit rows carry: the person (with the key they used), or nobody (link visitors and system work are anonymous). */
export function actorRef(a: Actor): ActorRef | null {
  if (a.kind === 'person') return { id: a.principal.id, email: a.principal.email };
  if (a.kind === 'key') return { id: a.principal.id, email: a.principal.email, key_id: a.key.id };
  return null;
}

/** The account whose rights apply, or null for system work. */
export const principalOf = (a: Actor): Principal | null => (a.kind === 'system' ? null : a.principal);

/**
 * An actor as a job payload keeps it (JSON): the person is looked up again, in `tenant_id` (their tenant when
 * the op was queued), when the job runs, so a restarted op resumes in its tenant. A spec recorded before ops
 * carried their tenant has none: tenant 1's.
 */
export type ActorSpec =
  | { kind: 'person'; user_id: number; tenant_id?: number; request?: RequestMeta }
  | { kind: 'key'; user_id: number; key_id: number; tenant_id?: number; request?: RequestMeta }
  | { kind: 'link'; user_id: number; share: LinkActor['share']; tenant_id?: number; request?: RequestMeta }
  | { kind: 'system'; job: string; tenant_id?: number };

export function actorSpec(a: Actor): ActorSpec {
  if (a.kind === 'system') return { kind: 'system', job: a.job, ...(a.tenant && { tenant_id: a.tenant.tenant_id }) };
  const tenant_id = a.principal.tenant_id;
  if (a.kind === 'link') return { kind: 'link', user_id: a.principal.id, share: a.share, tenant_id, request: a.request };
  if (a.kind === 'key') return { kind: 'key', user_id: a.principal.id, key_id: a.key.id, tenant_id, request: a.request };
  return { kind: 'person', user_id: a.principal.id, tenant_id, request: a.request };
}

/** Turns a recorded actor back into a live one. */
export interface ActorRestorer {
  /**
   * The actor of `spec` as it stands now. A person (or a link's creator) who
   * was deleted or disabled since, or a key revoked or expired since → `forbidden`. Ops queued before actors were
   * recorded carry `{id, email}` and come back as that person.
   */
  restore(spec: ActorSpec | ActorRef | null, request?: RequestMeta): Promise<Actor>;
}
