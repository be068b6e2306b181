/** /api/admin/storages, storage-drivers, grants and sync runs. */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { parseDuration } from '../../lib/duration';
import type { Catalogue, StorageInput } from '../../catalogue';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { q, validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: storages', 'admin');

const storageBody = z
  .object({
    name: z.string().max(255),
    driver: z.string().max(100),
    config: z.unknown(),
    mount_path: z.string().max(1024),
    sync_mode: z.string().max(32),
    sync_interval_s: z
      .number()
      .int()
      .min(0)
      .max(365 * 86400),
    sync_interval: z.union([z.string().max(32), z.number()]),
    enabled: z.boolean(),
    read_only: z.boolean(),
    readonly: z.boolean(),
    rbac_enabled: z.boolean(),
    ocr: z.boolean(),
    replica_target_id: z.number().int().positive().nullable(),
    skip_probe: z.boolean(),
  })
  .partial();

const grantsBody = z.object({
  grants: z
    .array(
      z
        .object({ user_id: z.number().int().positive().optional(), group: z.string().min(1).max(64).optional(), level: z.enum(['viewer', 'editor']) })
        .refine((g) => (g.user_id === undefined) !== (g.group === undefined), { message: 'exactly one of user_id or group' }),
    )
    .max(1000),
});

const runsQuery = z.object({ storage_id: q.int(1).optional(), limit: q.int(1, 500).default(50), offset: q.int().default(0) });

/** The body → service input: `readonly`/`read_only` and `sync_interval` duration strings accepted. */
function toInput(b: z.infer<typeof storageBody>): StorageInput {
  let interval = b.sync_interval_s;
  if (b.sync_interval !== undefined) {
    const ms = parseDuration(b.sync_interval);
    if (ms === null) throw new AppError('validation_failed', { field: 'sync_interval' }, { field: 'sync_interval', reason: 'a duration such as 15m or 900' });
    interval = Math.floor(ms / 1000);
  }
  return {
    name: b.name,
    driver: b.driver,
    config: b.config,
    mount_path: b.mount_path,
    sync_mode: b.sync_mode,
    sync_interval_s: interval,
    enabled: b.enabled,
    read_only: b.read_only ?? b.readonly,
    rbac_enabled: b.rbac_enabled,
    ocr: b.ocr,
    replica_target_id: b.replica_target_id,
  };
}

const idOf = (ctx: Ctx): number => {
  if (!/^\d{1,12}$/.test(ctx.params.id ?? '')) throw new AppError('bad_id');
  return Number(ctx.params.id);
};

export function adminStorageRoutes(d: { catalogue: Catalogue; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.use(requireAdmin);
  const body = async (ctx: Ctx) => validate(storageBody, await readObject(ctx, d.maxJsonBytes));
  const save = (ctx: Ctx, skipProbe?: boolean) => ({ actor: actorOf(ctx), request: reqMeta(ctx), skipProbe });
  const s = d.catalogue.storages;

  r.get('/storage-drivers', doc({ summary: 'Driver descriptors (the fields each storage driver takes)' }), (ctx) => {
    ctx.body = s.descriptors();
  });
  r.get('/storages', doc({ summary: 'List storages' }), (ctx) => {
    ctx.body = { storages: s.list(me(ctx)) };
  });
  r.post('/storages/test', doc({ summary: 'Test a connection without saving', body: storageBody }), async (ctx) => {
    ctx.body = await s.test(me(ctx), toInput(await body(ctx)));
  });
  r.post('/storages', doc({ summary: 'Add a storage (probed before it is saved)', body: storageBody }), async (ctx) => {
    const b = await body(ctx);
    ctx.body = await s.create(me(ctx), toInput(b), save(ctx, b.skip_probe));
  });
  r.get('/storages/:id', doc({ summary: 'One storage (secrets read back as ***)' }), (ctx) => {
    ctx.body = s.get(me(ctx), idOf(ctx));
  });
  const update = async (ctx: Ctx) => {
    const b = await body(ctx);
    ctx.body = await s.update(me(ctx), idOf(ctx), toInput(b), save(ctx, b.skip_probe));
  };
  r.put('/storages/:id', doc({ summary: 'Change a storage (partial updates allowed)', body: storageBody }), update);
  r.patch('/storages/:id', doc({ summary: 'Change a storage (partial)', body: storageBody }), update);
  r.delete('/storages/:id', doc({ summary: 'Remove a storage and its cached rows' }), async (ctx) => {
    await s.delete(me(ctx), idOf(ctx), save(ctx));
    ctx.body = { ok: true };
  });
  r.post('/storages/:id/test', doc({ summary: 'Test a saved storage’s connection with changed settings', body: storageBody }), async (ctx) => {
    const id = idOf(ctx);
    ctx.body = await s.test(me(ctx), toInput(await body(ctx)), id);
  });
  r.post('/storages/:id/sync', doc({ summary: 'Start a sync run (poll /api/admin/sync/runs/{id})', status: 202 }), async (ctx) => {
    const id = idOf(ctx);
    s.get(me(ctx), id);
    ctx.status = 202;
    ctx.body = { run_id: await d.catalogue.syncer.requestSync(id) };
  });
  r.get('/storages/:id/grants', doc({ summary: 'Who may open a storage, with which role' }), (ctx) => {
    const id = idOf(ctx);
    s.get(me(ctx), id);
    ctx.body = { grants: d.catalogue.repo.grants(me(ctx), id) };
  });
  r.put('/storages/:id/grants', doc({ summary: 'Set who may open a storage', body: grantsBody }), async (ctx) => {
    const id = idOf(ctx);
    s.get(me(ctx), id);
    const b = validate(grantsBody, await readObject(ctx, d.maxJsonBytes));
    const done = await d.catalogue.repo.replaceGrants(
      me(ctx),
      id,
      b.grants.map((g) => ({ user_id: g.user_id ?? null, group: g.group ?? null, level: g.level })),
    );
    // The storage is the caller's (checked above): a person of another tenant is as unknown as a missing one.
    if (!done) throw new AppError('validation_failed', { field: 'grants', reason: 'unknown person' }, { field: 'grants', reason: 'unknown person' });
    ctx.body = { grants: d.catalogue.repo.grants(me(ctx), id) };
  });
  r.get('/sync/runs', doc({ summary: 'Sync runs (filter by storage, paging)', query: runsQuery }), async (ctx) => {
    ctx.body = { runs: await d.catalogue.syncer.runs.list(me(ctx), validate(runsQuery, ctx.query)) };
  });
  r.get('/sync/runs/:id', doc({ summary: 'One sync run with per-error detail' }), async (ctx) => {
    const run = await d.catalogue.syncer.runs.detail(me(ctx), idOf(ctx));
    if (!run) throw new AppError('not_found');
    ctx.body = run;
  });
  return r;
}
