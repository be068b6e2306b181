/**
 * Two-factor sign-in over HTTP: the login's second step
 * (`POST /api/auth/login/mfa`), the person's own enrolment under
 * `/api/auth/mfa` (every change re-checks the current password), and the
 * admin's view and reset under `/api/admin`. See docs/auth.md.
 */
import Router from '@koa/router';
import { AppError, validation } from '../../errors';
import type { Auth, RegistrationResponseJSON, SecondStepAnswer, Who } from '../../auth';
import { readObject } from '../middlewares/body';
import { requireAdmin, requireUser, setSessionCookie } from '../middlewares/auth';
import { relyingParty } from '../relying-party';
import { validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Auth: second factor', 'user');

export interface MfaRoutesDeps {
  auth: Auth;
  secureCookies: boolean;
  maxJsonBytes: number;
  /** SERVICE_PUBLIC_URL ('' when unset): decides the passkey RP behind a tunnel. */
  publicUrl: string;
}

/** A WebAuthn credential in its JSON form; the verifier checks the rest. */
const credential = z.looseObject({
  id: z.string().min(1).max(2048),
  rawId: z.string().min(1).max(2048),
  type: z.literal('public-key'),
  response: z.looseObject({ clientDataJSON: z.string().max(16_384) }),
  clientExtensionResults: z.looseObject({}).default({}),
});
const secondStep = z
  .object({
    challenge: z.string().min(16).max(200),
    totp: z.string().max(20).optional(),
    recovery_code: z.string().max(64).optional(),
    passkey: credential.optional(),
  })
  .strict();
const password = { current_password: z.string().max(1024) };
const withPassword = z.object(password);
const confirm = z.object({ code: z.string().min(1).max(20) });
const register = z.object({ challenge: z.string().min(16).max(200), name: z.string().trim().min(1).max(100), response: credential });

const idParam = (ctx: Ctx): number => {
  if (!/^\d{1,15}$/.test(ctx.params.id ?? '') || Number(ctx.params.id) <= 0) throw new AppError('bad_id');
  return Number(ctx.params.id);
};

export function mfaRoutes(d: MfaRoutesDeps): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/auth' });
  const { enrolment } = d.auth.mfa;
  const body = (ctx: Ctx) => readObject(ctx, d.maxJsonBytes);
  const rp = (ctx: Ctx) => relyingParty(ctx, d.publicUrl);
  const who = (ctx: Ctx): Who => ({ ...me(ctx), request: reqMeta(ctx) });
  /** Reads the body, checks the re-entered password, then hands the rest of the body on. */
  const reauthed = async (ctx: Ctx): Promise<Record<string, unknown>> => {
    const b = await body(ctx);
    await enrolment.reauth(who(ctx), validate(withPassword, b).current_password);
    return b;
  };

  r.post('/login/mfa', doc({ summary: 'Second sign-in step: a TOTP code, a recovery code or a passkey', body: secondStep, auth: 'public' }), async (ctx) => {
    const b = validate(secondStep, await body(ctx));
    const answers = (['totp', 'recovery_code', 'passkey'] as const).filter((k) => b[k] !== undefined);
    if (answers.length !== 1) throw validation(answers[1] ?? 'totp', 'exactly one of totp, recovery_code, passkey');
    const res = await d.auth.auth.loginSecondStep(ctx.state.tenant, b.challenge, b as SecondStepAnswer, reqMeta(ctx), rp(ctx));
    setSessionCookie(ctx, res.token, res.expires_at, d.secureCookies);
    ctx.body = res;
  });

  r.get('/mfa', doc({ summary: 'My second factors' }), requireUser, async (ctx) => {
    ctx.body = await enrolment.status(me(ctx), me(ctx).id, rp(ctx)?.id ?? '');
  });

  r.post('/mfa/totp/setup', doc({ summary: 'Start TOTP enrolment (needs the current password)', body: withPassword }), requireUser, async (ctx) => {
    await reauthed(ctx);
    ctx.body = await enrolment.totpSetup(who(ctx));
  });

  // Finishes the setup the password-checked call above started (15 minutes).
  r.post('/mfa/totp/confirm', doc({ summary: 'Confirm TOTP enrolment with a first code', body: confirm }), requireUser, async (ctx) => {
    const b = validate(confirm, await body(ctx));
    ctx.body = await enrolment.totpConfirm(who(ctx), b.code);
  });

  r.delete('/mfa/totp', doc({ summary: 'Remove TOTP (needs the current password)', body: withPassword }), requireUser, async (ctx) => {
    await reauthed(ctx);
    await enrolment.totpRemove(who(ctx));
    ctx.body = { ok: true };
  });

  r.post('/mfa/recovery-codes', doc({ summary: 'New recovery codes (needs the current password)', body: withPassword }), requireUser, async (ctx) => {
    await reauthed(ctx);
    ctx.body = await enrolment.regenerateCodes(who(ctx));
  });

  r.post(
    '/mfa/passkeys/options',
    doc({ summary: 'Options for registering a passkey (needs the current password)', body: withPassword }),
    requireUser,
    async (ctx) => {
      await reauthed(ctx);
      const here = rp(ctx);
      if (!here) throw validation('host', 'no Host header');
      ctx.body = await enrolment.passkeyOptions(who(ctx), here);
    },
  );

  // Finishes the registration the password-checked options call started (5 minutes, same address).
  r.post('/mfa/passkeys', doc({ summary: 'Register a passkey', body: register }), requireUser, async (ctx) => {
    const b = validate(register, await body(ctx));
    const here = rp(ctx);
    if (!here) throw validation('host', 'no Host header');
    ctx.body = await enrolment.passkeyRegister(who(ctx), here, b.challenge, b.name, b.response as unknown as RegistrationResponseJSON);
  });

  r.delete('/mfa/passkeys/:id', doc({ summary: 'Remove a passkey (needs the current password)', body: withPassword }), requireUser, async (ctx) => {
    const id = idParam(ctx);
    await reauthed(ctx);
    await enrolment.passkeyRemove(who(ctx), id);
    ctx.body = { ok: true };
  });

  return r;
}

/** `GET /api/admin/mfa` (who has a second factor) and `POST /api/admin/users/:id/mfa/reset`. */
export function adminMfaRoutes(d: { auth: Auth }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.use(requireAdmin);
  r.get('/mfa', doc({ summary: 'Accounts with a second factor', auth: 'admin' }), async (ctx) => {
    ctx.body = { users: await d.auth.mfa.enrolment.enrolledUsers(me(ctx)) };
  });
  r.post('/users/:id/mfa/reset', doc({ summary: 'Remove an account’s second factors', auth: 'admin' }), async (ctx) => {
    const removed = await d.auth.mfa.enrolment.reset(me(ctx), idParam(ctx), { actor: actorOf(ctx), request: reqMeta(ctx) });
    ctx.body = { ok: true, removed };
  });
  return r;
}
