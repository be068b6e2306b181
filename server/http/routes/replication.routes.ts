/**
 * Admin replication (spec: Admin: protection, replication, updates):
 * targets under /api/admin/replication-targets, rules, settings, the failure
 * log, Fix and the report under /api/admin/replica. Every route answers 503
 * `not_configured` when the process has no replication wired. Admin-verb API
 * keys reach the same routes under /api/ai/admin/... (key-scope.ts). Targets,
 * rules, failures, Fix and the live status are the admin's tenant's (another
 * tenant's id answers 404 like a missing one); the settings, the audit, the
 * drill and the report are the installation's (platform routes in
 * multi-tenant mode: platform-routes.ts).
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { REPLICA_MODES, REPLICA_OPS, type Replication } from '../../replication';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { q, validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState, type Ctx } from '../context';
import type { EventBus } from '../../events';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: replication', 'admin');

const targetBody = z
  .object({
    name: z.string().max(255),
    driver: z.string().min(1).max(100),
    config: z.unknown(),
    mode: z.enum(['async', 'sync']),
    enabled: z.boolean(),
  })
  .partial()
  .strict();

const ruleBody = z
  .object({
    path_pattern: z.string().max(1024),
    mode: z.string().max(32),
    priority: z.number().int().min(-1_000_000).max(1_000_000),
    enabled: z.boolean(),
    description: z.string().max(1000).nullable(),
  })
  .partial()
  .strict();

const settingsBody = z
  .object({
    report_cron: z.string().max(256),
    drill_cron: z.string().max(256),
    audit_cron: z.string().max(256),
    audit_full_cron: z.string().max(256),
    audit_sample_size: z.number().int().min(1).max(100_000),
    report_enabled: z.boolean(),
    default_mode: z.string().max(32),
  })
  .partial()
  .strict();

const failuresQuery = z.object({ unresolved: q.bool().optional(), limit: q.int(1, 500).default(50), offset: q.int().default(0) });
const auditBody = z.object({ kind: z.enum(['sample', 'full']).default('sample'), sample: z.number().int().min(1).max(100_000).optional() }).strict();
const drillBody = z
  .object({ path: z.string().min(1).max(8192) })
  .partial()
  .strict();
const fixOneBody = z.object({ path: z.string().min(1).max(8192), op: z.enum(REPLICA_OPS as [string, ...string[]]) });

const idOf = (ctx: Ctx): number => {
  if (!/^\d{1,12}$/.test(ctx.params.id ?? '')) throw new AppError('bad_id');
  return Number(ctx.params.id);
};

export function replicationRoutes(d: { replication?: Replication; bus: EventBus; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  const wired = (): Replication => {
    if (!d.replication) throw new AppError('not_configured', { feature: 'replication' });
    return d.replication;
  };
  const onlyReplication = async (ctx: Ctx, next: () => Promise<unknown>) => {
    if (!/^\/api\/admin\/(replication-targets|replica)(\/|$)/.test(ctx.path)) return next();
    ctx.state.door = 'admin';
    await requireAdmin(ctx, async () => {
      wired();
      await next();
    });
  };
  r.use(onlyReplication);
  const body = async <T extends z.ZodType>(ctx: Ctx, schema: T) => validate(schema, await readObject(ctx, d.maxJsonBytes));
  const audit = (ctx: Ctx, resource: string, meta: Record<string, unknown>) =>
    d.bus.emit(me(ctx), 'audit', { action: 'admin.config_change', actor: actorOf(ctx), request: reqMeta(ctx), resource, meta });

  // Targets
  r.get('/replication-targets', doc({ summary: 'Replication targets' }), async (ctx) => {
    ctx.body = { targets: await wired().targets.list(me(ctx)) };
  });
  r.post('/replication-targets', doc({ summary: 'Add a replication target', body: targetBody }), async (ctx) => {
    const view = await wired().targets.create(me(ctx), await body(ctx, targetBody));
    await audit(ctx, `replication-target:${view.id}`, { created: true, driver: view.driver });
    ctx.body = view;
  });
  r.get('/replication-targets/:id', doc({ summary: 'One replication target' }), async (ctx) => {
    ctx.body = await wired().targets.get(me(ctx), idOf(ctx));
  });
  r.patch('/replication-targets/:id', doc({ summary: 'Change a replication target', body: targetBody }), async (ctx) => {
    const id = idOf(ctx);
    const b = await body(ctx, targetBody);
    ctx.body = await wired().targets.update(me(ctx), id, b);
    await audit(ctx, `replication-target:${id}`, { fields: Object.keys(b) });
  });
  r.delete('/replication-targets/:id', doc({ summary: 'Remove a replication target (unlinks the storages that pointed at it)' }), async (ctx) => {
    const id = idOf(ctx);
    const { unlinked } = await wired().targets.delete(me(ctx), id);
    await audit(ctx, `replication-target:${id}`, { deleted: true, unlinked });
    ctx.body = { ok: true, unlinked };
  });

  // Rules
  r.get('/replica/rules', doc({ summary: 'Replication rules, by priority' }), async (ctx) => {
    ctx.body = { rules: await wired().policy.rules(me(ctx)), modes: REPLICA_MODES };
  });
  r.post('/replica/rules', doc({ summary: 'Add a replication rule', body: ruleBody }), async (ctx) => {
    const view = await wired().policy.createRule(me(ctx), await body(ctx, ruleBody));
    await audit(ctx, `replica-rule:${view.id}`, { created: true });
    ctx.body = view;
  });
  r.patch('/replica/rules/:id', doc({ summary: 'Change a replication rule', body: ruleBody }), async (ctx) => {
    const id = idOf(ctx);
    ctx.body = await wired().policy.updateRule(me(ctx), id, await body(ctx, ruleBody));
    await audit(ctx, `replica-rule:${id}`, {});
  });
  r.delete('/replica/rules/:id', doc({ summary: 'Remove a replication rule' }), async (ctx) => {
    const id = idOf(ctx);
    await wired().policy.deleteRule(me(ctx), id);
    await audit(ctx, `replica-rule:${id}`, { deleted: true });
    ctx.body = { ok: true };
  });

  // Settings
  r.get('/replica/settings', doc({ summary: 'Replication settings (report schedule, default mode)' }), (ctx) => {
    ctx.body = wired().policy.settingsView();
  });
  r.patch('/replica/settings', doc({ summary: 'Change replication settings (reloads the schedule and rules)', body: settingsBody }), async (ctx) => {
    const b = await body(ctx, settingsBody);
    ctx.body = await wired().policy.patchSettings(b);
    await audit(ctx, 'replica-settings', { fields: Object.keys(b) });
  });

  // Failures and repair
  r.get('/replica/failures', doc({ summary: 'Replication failures', query: failuresQuery }), async (ctx) => {
    ctx.body = { failures: await wired().repair.failures(me(ctx), validate(failuresQuery, ctx.query)) };
  });
  r.get('/replica/failures/count', doc({ summary: 'How many replication failures are unresolved' }), async (ctx) => {
    ctx.body = { count: await wired().repair.count(me(ctx)) };
  });
  r.post('/replica/fix', doc({ summary: 'Queue a retry for every unresolved failure' }), async (ctx) => {
    ctx.body = await wired().repair.fixAll(me(ctx));
  });
  r.post('/replica/fix-one', doc({ summary: 'Retry one path’s replication', body: fixOneBody }), async (ctx) => {
    const b = await body(ctx, fixOneBody);
    ctx.body = await wired().repair.fixOne(me(ctx), b.path, b.op);
  });

  // Content audit (verified backups)
  r.get('/replica/audit', doc({ summary: 'The latest replica audit (204 before the first)' }), async (ctx) => {
    const last = await wired().audit.last();
    if (!last) {
      ctx.status = 204;
      return;
    }
    ctx.body = last;
  });
  r.post('/replica/audit/run-now', doc({ summary: 'Run a replica audit now (sample or full)', body: auditBody, status: 202 }), async (ctx) => {
    const b = await body(ctx, auditBody);
    ctx.status = 202;
    ctx.body = { op_id: await wired().audit.request(b.kind, b.sample) };
  });

  // Restore drill
  r.get('/replica/drill', doc({ summary: 'The latest restore drill (204 before the first)' }), async (ctx) => {
    const last = await wired().drill.last();
    if (!last) {
      ctx.status = 204;
      return;
    }
    ctx.body = last;
  });
  r.post('/replica/drill/run-now', doc({ summary: 'Run a restore drill now', body: drillBody, status: 202 }), async (ctx) => {
    const b = await body(ctx, drillBody);
    ctx.status = 202;
    ctx.body = { op_id: await wired().drill.request(b.path ? await wired().repair.place(me(ctx), b.path) : {}) };
  });

  // Live status (recovery point) and the report
  r.get('/replica/status', doc({ summary: 'Replication status: lag, recovery point, repair' }), async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await wired().repair.status([me(ctx)]);
  });
  r.get('/replica/report', doc({ summary: 'The latest replication report (204 before the first run)' }), async (ctx) => {
    const report = await wired().repair.report();
    if (!report) {
      ctx.status = 204;
      return;
    }
    ctx.body = report;
  });
  r.post('/replica/report/run-now', doc({ summary: 'Build the replication report now' }), async (ctx) => {
    ctx.body = await wired().repair.runReport();
  });
  return r;
}
