/**
 * Turns every thrown error into the spec's envelope `{error, message, details?,
 * params?}` in the reader's language. Unknown errors become `internal` with no
 * stack or detail in the body (they are logged).
 */
import { isAppError } from '../../errors';
import { busyError, isBusy } from '../../db';
import { t } from '../../lib/i18n';
import { statusFor } from '../error-map';
import type { Ctx, Mw } from '../context';

/** `onBusy` hears of every database lock a request met (so statements stop waiting for it: db/busy.ts). */
export function errorEnvelope(log: (msg: string, err?: unknown) => void, onBusy?: () => void): Mw {
  return (ctx, next) =>
    next().catch((err: unknown) => {
      if (onBusy && isBusy(err)) onBusy();
      respondError(ctx, err, log);
    });
}

export function respondError(ctx: Ctx, err: unknown, log: (msg: string, err?: unknown) => void): void {
  if (ctx.headerSent || !ctx.writable) {
    // A client that went away (or was timed out) mid-request is no server error.
    if (!ctx.req.destroyed) log(`error after headers were sent on ${ctx.method} ${ctx.path}`, err);
    ctx.res.destroy();
    return;
  }
  let code = 'internal';
  let params: Record<string, unknown> = {};
  let details: Record<string, unknown> | undefined;
  const e = err as { status?: number; expose?: boolean; type?: string; code?: string };
  // A write that met a lock held by another process: the request may be retried (busy.ts).
  if (isBusy(err)) err = busyError();
  if (isAppError(err)) {
    code = err.code;
    params = err.params;
    details = err.details;
  } else if (e?.status === 413 || e?.type === 'entity.too.large') {
    code = 'payload_too_large';
  } else {
    log(`unhandled error on ${ctx.method} ${ctx.path}`, err);
  }
  ctx.status = statusFor(code, ctx.state.door, params);
  if (code === 'rate_limited' || ((code === 'locked' || ctx.status === 503) && params.retry_after !== undefined))
    ctx.set('Retry-After', String(params.retry_after ?? 1));
  const body: Record<string, unknown> = { error: code, message: t(ctx.state.lang ?? 'en', code, params), ...topLevel(code, params, details) };
  if (details) body.details = details;
  if (Object.keys(params).length) body.params = params;
  // Public pages (`/s/…`, `/d/…`) answer refusals with their styled page unless the client asks for JSON.
  if (ctx.state.renderPublicError && ctx.accepts('html', 'json') === 'html') {
    ctx.state.renderPublicError(ctx, code, params);
    return;
  }
  ctx.type = 'application/json';
  ctx.body = body;
}

/**
 * Fields the spec's error table writes at the top level of a code's body,
 * beside `error` (`code: NAME_NOT_ALLOWED` with `reason`; `code:
 * QUOTA_EXCEEDED`): one table here, whatever threw the error.
 */
const TOP_LEVEL: Record<string, { code: string; fields: string[] }> = {
  name_not_allowed: { code: 'NAME_NOT_ALLOWED', fields: ['reason'] },
  quota_exceeded: { code: 'QUOTA_EXCEEDED', fields: [] },
};

function topLevel(code: string, params: Record<string, unknown>, details: Record<string, unknown> | undefined): Record<string, unknown> {
  const spec = TOP_LEVEL[code];
  if (!spec) return {};
  const out: Record<string, unknown> = { code: spec.code };
  for (const f of spec.fields) out[f] = details?.[f] ?? params[f];
  return out;
}

declare module '../context' {
  interface AppState {
    /** Set by public routes: draws a styled page instead of JSON for browsers. */
    renderPublicError?: (ctx: Ctx, code: string, params: Record<string, unknown>) => void;
  }
}
