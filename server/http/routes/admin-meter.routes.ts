/**
 * The request meter of metered storages (admin): per-day counts, the daily
 * budget and the monthly estimate of one storage; the price table per driver.
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { DEFAULT_PRICES, MAX_BUDGET, type Catalogue } from '../../catalogue';
import type { SettingsStore } from '../../settings';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate, z } from '../validate';
import { me, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: storages', 'admin');

const budgetBody = z.object({ request_budget_per_day: z.number().int().min(0).max(MAX_BUDGET) }).strict();
const price = z.number().min(0).max(1000);
const pricesBody = z
  .object({
    prices: z
      .record(z.string().regex(/^[a-z0-9_-]{1,64}$/), z.object({ list: price, head: price, get: price, put: price }).strict())
      .refine((r) => Object.keys(r).length <= 32, 'at most 32 drivers'),
  })
  .strict();

const idOf = (ctx: Ctx): number => {
  if (!/^\d{1,12}$/.test(ctx.params.id ?? '')) throw new AppError('bad_id');
  return Number(ctx.params.id);
};

export function adminMeterRoutes(d: { catalogue: Catalogue; settings: SettingsStore; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.use(requireAdmin);
  const { meter, storages } = d.catalogue;
  const prices = () => ({ ...DEFAULT_PRICES, ...d.settings.get('meter_prices') });

  r.get('/storages/:id/meter', doc({ summary: 'A metered storage’s request counts per day, budget and monthly estimate' }), async (ctx) => {
    const id = idOf(ctx);
    storages.get(me(ctx), id);
    ctx.body = await meter.view(id);
  });
  r.put('/storages/:id/meter', doc({ summary: 'Set a storage’s daily request budget (0 = none)', body: budgetBody }), async (ctx) => {
    const id = idOf(ctx);
    storages.get(me(ctx), id);
    const b = validate(budgetBody, await readObject(ctx, d.maxJsonBytes));
    await meter.setBudget(id, b.request_budget_per_day);
    ctx.body = await meter.view(id);
  });
  r.get('/meter/prices', doc({ summary: 'Request price table per driver' }), (ctx) => {
    ctx.body = { prices: prices(), defaults: DEFAULT_PRICES };
  });
  // The stored table holds only what the admin set; drivers absent from it fall back to the defaults.
  r.put('/meter/prices', doc({ summary: 'Change the request price table', body: pricesBody }), async (ctx) => {
    const b = validate(pricesBody, await readObject(ctx, d.maxJsonBytes));
    await d.settings.set('meter_prices', b.prices);
    ctx.body = { prices: prices(), defaults: DEFAULT_PRICES };
  });
  return r;
}
