/** Brings a job's recorded actor back to life against the accounts as they are now. */
import { AppError } from '../errors';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import type { ActorRef, RequestMeta } from '../events';
import { systemActor, type Actor, type ActorRestorer, type ActorSpec } from './actor';
import { scopeOf, type KeyRow, type Keys } from './keys';
import type { Principal } from './types';
import type { UsersRepo } from './users.repo';

type Recorded = ActorSpec | ActorRef | null;

/** The rows a recorded actor needs: its person's account and, for a key, the key. */
const needs = (spec: Recorded): { userId?: number; keyId?: number } =>
  spec === null || ('kind' in spec && spec.kind === 'system')
    ? {}
    : !('kind' in spec)
      ? { userId: spec.id }
      : spec.kind === 'key'
        ? { userId: spec.user_id, keyId: spec.key_id }
        : { userId: spec.user_id };

/** The tenant a recorded actor is read in: the one it recorded (tenant 1 for a spec older than that). */
const tenantOf = (spec: Recorded): TenantScope =>
  spec !== null && 'kind' in spec && spec.kind !== 'system' && spec.tenant_id !== undefined ? { tenant_id: spec.tenant_id } : DEFAULT_TENANT;

/** The actor of `spec` from the rows `needs` named, read now. */
function build(spec: Recorded, request: RequestMeta | undefined, p: Principal | null, row: KeyRow | undefined): Actor {
  if (spec === null) return { kind: 'system', job: 'legacy' };
  if ('kind' in spec && spec.kind === 'system') return systemActor(spec.job, spec.tenant_id === undefined ? undefined : { tenant_id: spec.tenant_id });
  if (
    'kind' in spec &&
    spec.kind === 'key' &&
    (!row || row.user_id !== spec.user_id || row.revoked_at || (row.expires_at && Date.parse(row.expires_at) <= Date.now()))
  )
    throw new AppError('forbidden', { reason: 'the key that started this is revoked or expired' });
  if (!p) throw new AppError('forbidden', { reason: 'the account that started this is gone or disabled' });
  if (!('kind' in spec)) return { kind: 'person', principal: p, request };
  if (spec.kind === 'key') return { kind: 'key', principal: p, key: scopeOf(row!), request: spec.request ?? request };
  if (spec.kind === 'link') return { kind: 'link', principal: p, share: spec.share, request: spec.request ?? request };
  return { kind: 'person', principal: p, request: spec.request ?? request };
}

export function actorRestorer(users: UsersRepo, keys: Keys): ActorRestorer {
  return {
    async restore(spec, request) {
      const { userId, keyId } = needs(spec);
      // The person and key are read in the tenant the op recorded: another tenant's account never answers.
      const tenant = tenantOf(spec);
      const [row, p] = await Promise.all([
        keyId === undefined ? undefined : keys.byId(tenant, keyId),
        userId === undefined ? null : users.principal(tenant, userId),
      ]);
      return build(spec, request, p, row);
    },
  };
}
