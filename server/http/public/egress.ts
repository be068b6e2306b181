/**
 * Uplink protection at the public door: after a link opened, a visitor from
 * the internet passes the link guard (per-link stream cap, anomaly
 * suspension) and gets the shared egress budget's pacer for the response
 * body. Exempt: signed-in callers, and LAN visitors of the main listener
 * (client address loopback or private; a loopback address counts only when
 * no proxy header says it was forwarded and the Host is local, so a tunnel
 * client on this machine does not make the internet look local).
 */
import { isLanAddress } from '../../lib/net-addr';
import type { EgressShaper } from '../../lib/egress';
import type { LinkGuard, ShareRow } from '../../shares';
import type { Ctx } from '../context';
import type { TenantEgress } from './tenant-egress';

const LOOPBACK = /^(127\.|::1$)/;

/** A caller on this machine or its LAN, reaching the main listener (never the public links listener). */
export function lanCaller(ctx: Ctx): boolean {
  if (ctx.state.publicListener) return false;
  const ip = ctx.state.ip;
  return isLanAddress(ip) && (!LOOPBACK.test(ip) || ctx.state.loopback);
}

/** Whether the uplink budget and the guard leave this request alone. */
export function egressExempt(ctx: Ctx): boolean {
  return !!ctx.state.principal || lanCaller(ctx);
}

export type AdmitPublic = (ctx: Ctx, share: ShareRow) => Promise<void>;

/** `tenants`: each tenant's share of the budget (multi-tenant mode, tenant-egress.ts); the shared budget alone otherwise. */
export function publicEgress(o: { shaper: EgressShaper; guard: LinkGuard; tenants?: TenantEgress | null }): AdmitPublic {
  return async (ctx, share) => {
    if (egressExempt(ctx)) return;
    const release = await o.guard.enter(share, { ip: ctx.state.ip, ua: ctx.state.ua, ranged: !!ctx.get('range') });
    ctx.res.once('close', release);
    if (o.shaper.budget > 0) ctx.state.egress = o.tenants ? o.tenants.pacer(share) : o.shaper;
  };
}
