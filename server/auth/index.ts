/**
 * Accounts, sessions and sign-in. `createAuth` wires the parts; other modules
 * use `Principal` and the services through this face only.
 */
import type { Db } from '../db';
import type { EventBus } from '../events';
import { hmacHex } from '../lib/crypto';
import { AuthService } from './auth.service';
import { LoginThrottle } from './throttle';
import { Sessions } from './sessions';
import { UsersRepo } from './users.repo';
import { UsersService } from './users.service';
import { actorRestorer } from './actor-restorer';
import { createMfa } from './mfa';

export { AuthService, type LoginResult } from './auth.service';
export type { Mfa, RelyingParty, SecondStepAnswer, Who, RegistrationResponseJSON, AuthenticationResponseJSON } from './mfa';
export { UsersService, type CreateUser, type UpdateUser } from './users.service';
export { hashPassword, verifyPassword, passwordProblem } from './passwords';
export type { Principal, Role, UserView } from './types';
export { ROLES } from './types';
export {
  personActor, systemActor, linkActor, actorRef, principalOf, actorSpec,
  type Actor, type PersonActor, type LinkActor, type SystemActor, type ActorSpec, type ActorRestorer,
} from './actor';

export interface AuthOptions {
  secretKey: Buffer;
  sessionTtlMs: number;
  maxAttempts: number;
  lockMs: number;
  desktopBootstrap: string;
}

export function createAuth(db: Db, bus: EventBus, o: AuthOptions) {
  const repo = new UsersRepo(db);
  const jwtKey = Buffer.from(hmacHex(o.secretKey, 'session-jwt', 'purpose'), 'hex');
  const sessions = new Sessions(db, repo, jwtKey, o.sessionTtlMs);
  const users = new UsersService(repo, sessions, bus);
  const throttle = new LoginThrottle({ maxAttempts: o.maxAttempts, lockMs: o.lockMs });
  const mfa = createMfa({ db, users: repo, bus, throttle, secretKey: o.secretKey });
  const auth = new AuthService(db, repo, users, sessions, throttle, bus, { desktopBootstrap: o.desktopBootstrap }, mfa.secondStep);
  return { repo, sessions, users, auth, mfa, actors: actorRestorer(repo) };
}
export type Auth = ReturnType<typeof createAuth>;
