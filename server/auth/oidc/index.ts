/**
 * OIDC sign-in (docs/auth.md): settings (admin console and SERVICE_OIDC_*),
 * the authorization code flow with PKCE, state and nonce, and the mapping of
 * a provider's identity onto an account. `createOidc` wires the parts.
 */
import type { Db } from '../../db';
import type { EventBus } from '../../events';
import type { AuthService } from '../auth.service';
import type { UsersRepo } from '../users.repo';
import type { UsersService } from '../users.service';
import { OidcAccounts } from './accounts';
import { OidcConfig, type OidcStore } from './config.service';
import { PendingLogins } from './pending.repo';
import type { OidcEnv } from './settings';
import { OidcSignIn } from './signin.service';

export { OidcError, type OidcFailure } from './errors';
export { safeNext } from './next';
export type { OidcConfig, OidcStore } from './config.service';
export type { OidcSignIn } from './signin.service';
export type { OidcEnv, OidcPatch } from './settings';

export interface OidcDeps {
  db: Db;
  bus: EventBus;
  auth: { repo: UsersRepo; users: UsersService; auth: AuthService };
  store: OidcStore;
  env: OidcEnv;
  secretKey: Buffer;
  publicUrl: string;
  /** Warnings an operator should see: a provider that fails, a role the rules kept. */
  warn: (msg: string) => void;
}

export function createOidc(d: OidcDeps) {
  const config = new OidcConfig({ store: d.store, env: d.env, secretKey: d.secretKey, publicUrl: d.publicUrl, bus: d.bus });
  const accounts = new OidcAccounts({ db: d.db, repo: d.auth.repo, users: d.auth.users, bus: d.bus, warn: d.warn });
  const signIn = new OidcSignIn({ config, pending: new PendingLogins(d.db), accounts, auth: d.auth.auth, bus: d.bus, warn: d.warn });
  return { config, signIn };
}
export type Oidc = ReturnType<typeof createOidc>;
