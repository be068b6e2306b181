/**
 * Accounts, sessions and sign-in. `createAuth` wires the parts; other modules
 * use `Principal` and the services through this face only.
 */
import type { Db, TenantScope } from '../db';
import type { EventBus } from '../events';
import { hmacHex } from '../lib/crypto';
import { AuthService } from './auth.service';
import { LoginThrottle } from './throttle';
import { Sessions } from './sessions';
import { UsersRepo } from './users.repo';
import { UsersService } from './users.service';
import { actorRestorer } from './actor-restorer';
import { Keys } from './keys';
import { Roles } from './roles';
import { createMfa } from './mfa';

export { createOidc, OidcError, safeNext, type Oidc, type OidcFailure, type OidcEnv, type OidcPatch } from './oidc';

export { AuthService, type LoginResult } from './auth.service';
export { TenantDirectory, type TenantEntry } from './tenant-directory';
export { TenantQuotas, tenantOverQuota } from './tenant-quotas';
export { TenantPurge, TENANT_PURGE_JOB } from './tenant-purge';
export { TenantsService, type NewTenant } from './tenants.service';
export { Brandings, COLOUR, LOGO_MAX_BYTES, type Branding } from './brandings';
export { TenantLogosRepo } from './tenant-logos.repo';
export { TenantRecordsRepo, type TenantRecord, type TenantStatus } from './tenant-records.repo';
export type { LoginThrottle } from './throttle';
export type { Mfa, RelyingParty, SecondStepAnswer, Who, RegistrationResponseJSON, AuthenticationResponseJSON } from './mfa';
export { UsersService, type CreateUser, type UpdateUser } from './users.service';
export { hashPassword, verifyPassword, passwordProblem, setPasswordCost } from './passwords';
export type { Principal, Role, UserView } from './types';
export { ROLES } from './types';
export {
  personActor,
  systemActor,
  linkActor,
  keyActor,
  actorRef,
  actorTenant,
  principalOf,
  actorSpec,
  type Actor,
  type PersonActor,
  type LinkActor,
  type KeyActor,
  type SystemActor,
  type ActorSpec,
  type ActorRestorer,
} from './actor';
export { Keys, VERBS, checkVerbs, isKeyToken, keyView, scopeOf, type KeyScope, type KeyRow, type Verb } from './keys';
export { Roles, checkPermissionMap, type RoleView } from './roles';
export { PERMISSIONS, ROLE_MATRIX, decide, isPermission, isAppPermission, type Permission, type PermissionSubject } from './permissions';
export { can, requirePermission } from './access';

export interface AuthOptions {
  secretKey: Buffer;
  sessionTtlMs: number;
  maxAttempts: number;
  lockMs: number;
  desktopBootstrap: string;
  /** Whether anyone may sign up (the `allow_signup` setting). */
  allowSignup?: () => boolean;
}

export function createAuth(db: Db, bus: EventBus, o: AuthOptions) {
  const repo = new UsersRepo(db);
  const jwtKey = Buffer.from(hmacHex(o.secretKey, 'session-jwt', 'purpose'), 'hex');
  const sessions = new Sessions(db, repo, jwtKey, o.sessionTtlMs);
  const keys = new Keys(db, repo, bus, o.secretKey);
  // A change of a person's account reaches every way they are signed in: sessions end, cached keys are re-read.
  const signins = {
    revokeUser: async (s: TenantScope, id: number) => (await sessions.revokeUser(s, id), keys.forgetUser(id)),
    forgetUser: (id: number) => (sessions.forgetUser(id), keys.forgetUser(id)),
  };
  const users = new UsersService(repo, signins, bus);
  const roles = new Roles(db, bus, () => (sessions.forgetAll(), keys.forgetAll()));
  // Several instances on PostgreSQL count failures in the database (one limit for all); SQLite keeps them in memory.
  const shared = (scope: string) => (db.dialect === 'postgres' ? { shared: { db, scope } } : {});
  const throttle = new LoginThrottle({ maxAttempts: o.maxAttempts, lockMs: o.lockMs, ...shared('login') });
  // Account checks and sign-ups tell whether an address is taken: per client address no faster than sign-in attempts.
  const probes = new LoginThrottle({ maxAttempts: o.maxAttempts, lockMs: o.lockMs, ...shared('probe') });
  // Vault passphrase and recovery proofs (docs/vault.md) are guessed like passwords: the same limits, their own counters.
  const vaultThrottle = new LoginThrottle({ maxAttempts: o.maxAttempts, lockMs: o.lockMs, ...shared('vault') });
  const mfa = createMfa({ db, users: repo, bus, throttle, secretKey: o.secretKey });
  const auth = new AuthService(
    db,
    repo,
    users,
    sessions,
    throttle,
    bus,
    { desktopBootstrap: o.desktopBootstrap, allowSignup: o.allowSignup ?? (() => false) },
    mfa.secondStep,
    keys,
    probes,
  );
  return { repo, sessions, keys, roles, users, auth, throttle, probes, vaultThrottle, mfa, actors: actorRestorer(repo, keys) };
}
export type Auth = ReturnType<typeof createAuth>;
