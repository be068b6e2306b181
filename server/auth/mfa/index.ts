/**
 * Two-factor sign-in: TOTP with recovery codes, and passkeys. `createMfa`
 * wires the parts; see docs/auth.md ("Two-factor sign-in").
 */
import type { Db } from '../../db';
import type { EventBus } from '../../events';
import type { LoginThrottle } from '../throttle';
import type { UsersRepo } from '../users.repo';
import { MfaEnrolment } from './enrolment';
import { MfaRepo } from './mfa.repo';
import { SecondStep } from './second-step';

export { MfaEnrolment, type Who } from './enrolment';
export { SecondStep, type SecondStepAnswer } from './second-step';
export type { RelyingParty, RegistrationResponseJSON, AuthenticationResponseJSON } from './webauthn';

export function createMfa(o: { db: Db; users: UsersRepo; bus: EventBus; throttle: LoginThrottle; secretKey: Buffer; clock?: () => number }) {
  const deps = { repo: new MfaRepo(o.db), users: o.users, bus: o.bus, throttle: o.throttle, secretKey: o.secretKey, clock: o.clock ?? Date.now };
  const enrolment = new MfaEnrolment(deps);
  return { enrolment, secondStep: new SecondStep(deps, enrolment) };
}
export type Mfa = ReturnType<typeof createMfa>;
