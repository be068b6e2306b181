/** Brings a job's recorded actor back to life against the accounts as they are now. */
import { AppError } from '../errors';
import type { ActorRef, RequestMeta } from '../events';
import type { Actor, ActorRestorer, ActorSpec } from './actor';
import type { UsersRepo } from './users.repo';

export function actorRestorer(users: UsersRepo): ActorRestorer {
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
      if (spec.kind === 'link') return { kind: 'link', principal: principal(spec.user_id), share: spec.share, request: spec.request ?? request };
      return { kind: 'person', principal: principal(spec.user_id), request: spec.request ?? request };
    },
  };
}
