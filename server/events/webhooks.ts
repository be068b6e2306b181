/**
 * Outgoing webhooks. Each published event that a target's allow-list admits
 * (empty list = all) becomes one row in `webhook_deliveries` and one op of
 * kind `webhook.deliver`, so retries with backoff, restarts and the delivery
 * log come from the op queue. Targets (with plain signing keys) are a plain
 * input: the settings live in a higher layer.
 *
 * Wire format: `POST <url>`, `Content-Type: application/json`, body
 * `{id, event, created_at, data}` (fixed when the event is published), and
 * headers `X-Service-Event`, `X-Service-Delivery`, `X-Service-Timestamp`
 * (Unix seconds of this attempt) and, for a target with a key,
 * `X-Service-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`.
 */
import { randomBytes } from 'node:crypto';
import type { Sqlite } from '../db';
import type { WebhookDeliveriesTable } from '../db/tables';
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
  'file.uploaded', 'file.updated', 'file.infected', 'drop.received', 'share.suspended', 'storage.offline', 'storage.online', 'storage.volume_mismatch', 'replica_fail', 'primary_read_fail',
  'replica_reconcile_done', 'replica_status_report', 'update_available', 'update_applied',
] as const;

export interface WebhookTarget {
  id: string;
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

export type Delivery = Omit<WebhookDeliveriesTable, 'body'>;

/** The signature header value of `body` sent at `timestamp` (seconds) under `secret`. */
export const signWebhook = (secret: string, timestamp: number, body: string): string => `sha256=${hmacHex(Buffer.from(secret, 'utf8'), `${timestamp}.${body}`)}`;

export class Webhooks {
  private readonly maxAttempts: number;
  constructor(private sqlite: Sqlite, private queue: JobQueue, private o: WebhookOptions) {
    this.maxAttempts = o.maxAttempts ?? 6;
  }

  /** Registers the delivery op kind and subscribes to the bus. Returns the unsubscribe. */
  attach(bus: EventBus): () => void {
    this.queue.register(WEBHOOK_JOB, (ctx) => this.deliver(ctx), {
      concurrency: 2,
      maxAttempts: this.maxAttempts,
      backoffMs: this.o.backoffMs ?? 30_000,
    });
    return bus.on('*', (payload, meta) => {
      if ((WEBHOOK_EVENTS as readonly string[]).includes(meta.event)) this.publish(meta.event, payload, meta.at);
    });
  }

  /** Queues one delivery per target that admits `event`; returns the delivery ids. */
  publish(event: string, data: unknown, at = new Date().toISOString()): string[] {
    const ids: string[] = [];
    for (const t of this.o.targets()) {
      if (t.events.length && !t.events.includes(event)) continue;
      const id = 'whd_' + randomBytes(8).toString('hex');
      const body = JSON.stringify({ id, event, created_at: at, data });
      const now = new Date().toISOString();
      this.sqlite
        .prepare('INSERT INTO webhook_deliveries (id, target_id, url, event, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(id, t.id, t.url, event, body, now, now);
      this.queue.enqueue(WEBHOOK_JOB, { delivery_id: id }, { maxAttempts: this.maxAttempts });
      ids.push(id);
    }
    return ids;
  }

  /** The delivery log, newest first, optionally of one target. */
  list(o: { targetId?: string; limit?: number } = {}): Delivery[] {
    const where = o.targetId ? 'WHERE target_id = ?' : '';
    return this.sqlite
      .prepare(`SELECT id, target_id, url, event, status, attempts, response_code, error, created_at, updated_at FROM webhook_deliveries ${where} ORDER BY created_at DESC, id LIMIT ?`)
      .all(...(o.targetId ? [o.targetId] : []), o.limit ?? 100) as Delivery[];
  }

  /** Deletes log rows older than `ms` (finished ones only). */
  prune(ms: number): number {
    return this.sqlite.prepare("DELETE FROM webhook_deliveries WHERE status != 'pending' AND updated_at < ?").run(new Date(Date.now() - ms).toISOString()).changes;
  }

  /** One attempt: 2xx delivers; anything else throws so the queue retries with backoff, and the last attempt marks the row failed. */
  private async deliver(ctx: JobContext<{ delivery_id: string }>): Promise<unknown> {
    const row = this.sqlite.prepare('SELECT * FROM webhook_deliveries WHERE id = ?').get(ctx.payload.delivery_id) as WebhookDeliveriesTable | undefined;
    if (!row || row.status !== 'pending') return { skipped: true };
    const target = this.o.targets().find((t) => t.id === row.target_id);
    if (!target) return this.record(row.id, 'failed', null, 'the target was removed');
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
      if (res.status >= 200 && res.status < 300) return this.record(row.id, 'delivered', code, null);
      throw new AppError('storage_unreachable', { reason: `HTTP ${res.status}` }, undefined, `webhook answered HTTP ${res.status}`);
    } catch (e) {
      const reason = e instanceof AppError ? String(e.params.reason) : e instanceof Error ? (e.name === 'TimeoutError' ? 'timed out' : e.message) : String(e);
      this.record(row.id, last ? 'failed' : 'pending', code, reason);
      if (last) return { failed: reason };
      throw e instanceof AppError ? e : new AppError('storage_unreachable', { reason }, undefined, `webhook delivery failed: ${reason}`);
    }
  }

  private record(id: string, status: Delivery['status'], code: number | null, error: string | null): { status: string } {
    this.sqlite
      .prepare('UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, response_code = ?, error = ?, updated_at = ? WHERE id = ?')
      .run(status, code, error, new Date().toISOString(), id);
    return { status };
  }
}
