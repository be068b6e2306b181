/**
 * Outgoing webhooks. Each published event that a target of its tenant admits
 * (allow-list, empty list = all) becomes one row in `webhook_deliveries` and
 * one op of kind `webhook.deliver`, both in the event's tenant, so retries
 * with backoff, restarts and the delivery log come from the op queue. A
 * tenant's targets hear only its own events (docs/tenants.md). Targets (with
 * plain signing keys) are a plain input: the settings live in a higher layer.
 *
 * Wire format: `POST <url>`, `Content-Type: application/json`, body
 * `{id, event, created_at, data}` (fixed when the event is published), and
 * headers `X-Service-Event`, `X-Service-Delivery`, `X-Service-Timestamp`
 * (Unix seconds of this attempt) and, for a target with a key,
 * `X-Service-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db';
import type { TenantScope } from '../db/tenant-tables';
import { WebhookDeliveriesRepo, type Delivery } from './webhook-deliveries.repo';
import type { JobContext, JobQueue } from '../jobs';
import { AppError } from '../errors';
import { hmacHex } from '../lib/crypto';
import type { EventBus } from './bus';

export const WEBHOOK_JOB = 'webhook.deliver';

declare module '../jobs/types' {
  interface JobPayloads {
    [WEBHOOK_JOB]: { delivery_id: string };
  }
}

/** Events a webhook can carry: the spec's list (internal bus events such as `audit` never leave). */
export const WEBHOOK_EVENTS = [
  'file.uploaded',
  'file.updated',
  'file.infected',
  'drop.received',
  'share.suspended',
  'storage.offline',
  'storage.online',
  'storage.volume_mismatch',
  'replica_fail',
  'primary_read_fail',
  'replica_reconcile_done',
  'replica_status_report',
  'update_available',
  'update_applied',
  'app_store.update_available',
  'app_store.licences_unchecked',
] as const;

export interface WebhookTarget {
  id: string;
  /** The tenant whose events it hears. */
  tenant_id: number;
  url: string;
  events: string[];
  /** Plain HMAC key; empty sends no signature. */
  secret: string;
}

export interface WebhookOptions {
  targets: () => WebhookTarget[];
  /** Attempts per delivery (default 6). */
  maxAttempts?: number;
  /** Backoff before attempt n+1 is base * 2^(n-1) (default 30 s). */
  backoffMs?: number;
  /** Per-attempt bound on the whole HTTP exchange (default 10 s). */
  timeoutMs?: number;
  log?: (msg: string, err?: unknown) => void;
}

export type { Delivery };

/** The signature header value of `body` sent at `timestamp` (seconds) under `secret`. */
export const signWebhook = (secret: string, timestamp: number, body: string): string =>
  `sha256=${hmacHex(Buffer.from(secret, 'utf8'), `${timestamp}.${body}`)}`;

export class Webhooks {
  private readonly maxAttempts: number;
  private repo: WebhookDeliveriesRepo;
  constructor(
    db: Db,
    private queue: JobQueue,
    private o: WebhookOptions,
  ) {
    this.maxAttempts = o.maxAttempts ?? 6;
    this.repo = new WebhookDeliveriesRepo(db);
  }

  /** Registers the delivery op kind and subscribes to the bus. Returns the unsubscribe. */
  attach(bus: EventBus): () => void {
    this.queue.register(WEBHOOK_JOB, (ctx) => this.deliver(ctx), {
      concurrency: 2,
      maxAttempts: this.maxAttempts,
      backoffMs: this.o.backoffMs ?? 30_000,
    });
    return bus.on('*', async (payload, meta) => {
      if ((WEBHOOK_EVENTS as readonly string[]).includes(meta.event)) await this.publish(meta.tenant, meta.event, payload, meta.at);
    });
  }

  /** Queues one delivery per target of tenant `s` that admits `event`; returns the delivery ids. */
  async publish(s: TenantScope, event: string, data: unknown, at = new Date().toISOString()): Promise<string[]> {
    const ids: string[] = [];
    for (const t of this.o.targets()) {
      if (t.tenant_id !== s.tenant_id || (t.events.length && !t.events.includes(event))) continue;
      const id = 'whd_' + randomBytes(8).toString('hex');
      const body = JSON.stringify({ id, event, created_at: at, data });
      await this.repo.insert(s, { id, target_id: t.id, url: t.url, event, body }, new Date().toISOString());
      await this.queue.enqueue(WEBHOOK_JOB, { delivery_id: id }, { tenant: s, maxAttempts: this.maxAttempts });
      ids.push(id);
    }
    return ids;
  }

  /** The tenant's delivery log, newest first, optionally of one target. */
  list(s: TenantScope, o: { targetId?: string; limit?: number } = {}): Promise<Delivery[]> {
    return this.repo.list(s, o);
  }

  /** Deletes the tenant's log rows older than `ms` (finished ones only). */
  prune(s: TenantScope, ms: number): Promise<number> {
    return this.repo.prune(s, new Date(Date.now() - ms).toISOString());
  }

  /** One attempt: 2xx delivers; anything else throws so the queue retries with backoff, and the last attempt marks the row failed. */
  private async deliver(ctx: JobContext<{ delivery_id: string }>): Promise<unknown> {
    // The op runs in its delivery's tenant (queued in the event's).
    const row = await this.repo.get(ctx.tenant, ctx.payload.delivery_id);
    if (!row || row.status !== 'pending') return { skipped: true };
    const target = this.o.targets().find((t) => t.id === row.target_id && t.tenant_id === ctx.tenant.tenant_id);
    if (!target) return this.record(ctx.tenant, row.id, 'failed', null, 'the target was removed');
    const ts = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'filedock-webhook',
      'x-service-event': row.event,
      'x-service-delivery': row.id,
      'x-service-timestamp': String(ts),
    };
    if (target.secret) headers['x-service-signature'] = signWebhook(target.secret, ts, row.body);
    const last = ctx.attempt >= this.maxAttempts;
    let code: number | null = null;
    try {
      const res = await fetch(target.url, {
        method: 'POST',
        headers,
        body: row.body,
        redirect: 'manual',
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(this.o.timeoutMs ?? 10_000)]),
      });
      code = res.status;
      await res.body?.cancel();
      if (res.status >= 200 && res.status < 300) return this.record(ctx.tenant, row.id, 'delivered', code, null);
      throw new AppError('storage_unreachable', { reason: `HTTP ${res.status}` }, undefined, `webhook answered HTTP ${res.status}`);
    } catch (e) {
      const reason = e instanceof AppError ? String(e.params.reason) : e instanceof Error ? (e.name === 'TimeoutError' ? 'timed out' : e.message) : String(e);
      await this.record(ctx.tenant, row.id, last ? 'failed' : 'pending', code, reason);
      if (last) return { failed: reason };
      throw e instanceof AppError ? e : new AppError('storage_unreachable', { reason }, undefined, `webhook delivery failed: ${reason}`);
    }
  }

  private async record(s: TenantScope, id: string, status: Delivery['status'], code: number | null, error: string | null): Promise<{ status: string }> {
    await this.repo.recordAttempt(s, id, status, code, error, new Date().toISOString());
    return { status };
  }
}
