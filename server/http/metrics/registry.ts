/**
 * The Prometheus registry behind GET /metrics (docs/operations.md, "Metrics"):
 * prom-client's process metrics (event-loop delay, RSS, CPU) and one metric per
 * figure the service already keeps, read at scrape time from its source. This
 * module is loaded only once metrics are switched on (prom-client costs about
 * 12 MB and 0.3 s to load), so a service that never exports pays nothing.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { BusyStats } from '../../db';
import type { GatewayProtocol, ReplicaStatus } from '../../contract';
import { HttpRecorder } from './http-recorder';

/** Where each figure comes from; every function is called at scrape time and must be cheap. */
export interface MetricSources {
  dbWaits: () => BusyStats;
  /** Queued and running ops per kind (every instance's: they share the queue). */
  queueDepth: () => Promise<Array<{ kind: string; status: 'queued' | 'running'; n: number }>>;
  /** Full sync runs finished by this process, per outcome. */
  syncRuns: () => Record<string, number>;
  /** Thumbnails finished by this process, per outcome. */
  thumbnails: () => Record<string, number>;
  /** Antivirus scans recorded by this process, per outcome. */
  scans: () => ReadonlyMap<string, number>;
  /** A database read (awaited at scrape time). */
  replication: () => Promise<ReplicaStatus>;
  /** Failed sign-ins (password, OIDC, second step) seen by this process. */
  failedLogins: () => number;
  /** Open gateway sessions, one entry each. */
  gatewaySessions: () => Array<{ protocol: GatewayProtocol }>;
}

const PROTOCOLS: GatewayProtocol[] = ['webdav', 'sftp', 'ftp', 's3', 'nfs'];

export function buildRegistry(src: MetricSources): { registry: Registry; http: HttpRecorder } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'filedock_' });
  // Gauges named like counters (promtool's lint refuses them); their per-type twins stay.
  for (const n of ['active_handles_total', 'active_requests_total', 'active_resources_total']) registry.removeSingleMetric(`filedock_nodejs_${n}`);
  const registers = [registry];
  // A running total kept elsewhere, exposed as a counter: reset and set to the source's value at each scrape.
  const total = <L extends string>(name: string, help: string, labelNames: L[], read: () => Iterable<[Record<L, string>, number]>) =>
    new Counter({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [labels, n] of read()) this.inc(labels as never, n);
      },
    });
  const gauge = (name: string, help: string, read: () => number | Promise<number>) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        this.set(await read());
      },
    });
  const byState = (r: Record<string, number> | ReadonlyMap<string, number>) =>
    [...(r instanceof Map ? r : Object.entries(r))].map(([state, n]): [{ state: string }, number] => [{ state }, n]);

  total('filedock_db_busy_total', 'Database BUSY answers seen (a lock held by another connection or program).', [], () => [[{}, src.dbWaits().busy]]);
  total(
    'filedock_db_write_waits_total',
    'Writes that met a held database lock, by outcome (recovered after waiting, gave_up with database_busy).',
    ['outcome'],
    () => {
      const w = src.dbWaits();
      return [
        [{ outcome: 'recovered' }, w.recovered],
        [{ outcome: 'gave_up' }, w.gave_up],
      ];
    },
  );
  gauge('filedock_db_lock_held', '1 while a database lock held elsewhere is known.', () => Number(src.dbWaits().held));
  gauge('filedock_db_write_wait_max_seconds', 'The longest a write waited for a held lock since start.', () => src.dbWaits().max_wait_ms / 1000);
  new Gauge({
    name: 'filedock_ops_queue_depth',
    help: 'Ops queued or running, by kind and state.',
    labelNames: ['kind', 'state'],
    registers,
    async collect() {
      const depth = await src.queueDepth();
      this.reset();
      for (const r of depth) this.set({ kind: r.kind, state: r.status }, r.n);
    },
  });
  total('filedock_sync_runs_total', 'Full catalogue sync runs finished, by outcome.', ['state'], () => byState(src.syncRuns()));
  total('filedock_thumbnails_total', 'Thumbnails finished, by outcome (ready, failed, skipped).', ['state'], () => byState(src.thumbnails()));
  total('filedock_av_scans_total', 'Antivirus scans recorded, by outcome (clean, infected, error, skipped).', ['state'], () => byState(src.scans()));
  gauge('filedock_replication_lag_seconds', 'Age of the oldest change not yet replicated (the recovery point).', async () => (await src.replication()).rpo_s);
  gauge('filedock_replication_queued_copies', 'Copies waiting to reach the backup targets.', async () => (await src.replication()).queued_copies);
  gauge('filedock_replication_failures_pending', 'Replication failures not yet resolved.', async () => (await src.replication()).unresolved);
  total('filedock_login_failures_total', 'Failed sign-ins (password, OIDC, second step).', [], () => [[{}, src.failedLogins()]]);
  new Gauge({
    name: 'filedock_gateway_sessions',
    help: 'Gateway sessions open, by protocol (WebDAV and S3: clients active in the last 5 minutes).',
    labelNames: ['protocol'],
    registers,
    collect() {
      const n = new Map(PROTOCOLS.map((p) => [p, 0]));
      for (const s of src.gatewaySessions()) n.set(s.protocol, (n.get(s.protocol) ?? 0) + 1);
      for (const [protocol, v] of n) this.set({ protocol }, v);
    },
  });
  return { registry, http: new HttpRecorder(registers) };
}
