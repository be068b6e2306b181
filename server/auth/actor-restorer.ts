/** Brings a job's recorded actor back to life against the accounts as they are now. */
import { AppError } from '../errors';
import type { ActorRef, RequestMeta } from '../events';
import type { Actor, ActorRestorer, ActorSpec } from './actor';
import { scopeOf, type Keys } from './keys';
import type { UsersRepo } from './users.repo';

export function actorRestorer(users: UsersRepo, keys: Keys): ActorRestorer {
  const principal = (id: number) => {
    const p = users.principal(id);
    if (!p) throw new AppError('forbidden', { reason: 'the account that started this is gone or disabled' });
    return p;
  };
  return {
    restore(spec: ActorSpec | ActorRef | null, request?: RequestMeta): Actor {
      if (spec === null) return { kind: 'system', job: 'legacy' };
      if (!('kind' in spec)) return { kind: 'person', principal: principal(spec.id), request };
      if (spec.kind === 'system') return { kind: 'system', job: spec.job };
      if (spec.kind === 'key') {
        const row = keys.byId(spec.key_id);
        if (!row || row.user_id !== spec.user_id || row.revoked_at || (row.expires_at && Date.parse(row.expires_at) <= Date.now()))
          throw new AppError('forbidden', { reason: 'the key that started this is revoked or expired' });
        return { kind: 'key', principal: principal(spec.user_id), key: scopeOf(row), request: spec.request ?? request };
      }
      if (spec.kind === 'link') return { kind: 'link', principal: principal(spec.user_id), share: spec.share, request: spec.request ?? request };
      return { kind: 'person', principal: principal(spec.user_id), request: spec.request ?? request };
    },
  };
}
