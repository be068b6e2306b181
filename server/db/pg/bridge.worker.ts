/**
 * The PostgreSQL side of the synchronous bridge (bridge.ts): owns the one
 * connection, runs each statement it is posted and puts the answer on the
 * answer port, then wakes the main thread through the shared flag. Its own
 * event loop stays free while the main thread blocks, so it also notices a
 * lost connection and reconnects on its own, telling the main thread through
 * status messages (`up`, `down`).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { explain } from './connect';
import { sqliteLikeTypes } from './types';

interface Data {
  url: string;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  retryMs: number;
  flag: Int32Array;
  answers: MessagePort;
}
type Request = { type: 'query'; seq: number; sql: string; params: unknown[]; rowMode?: 'array' } | { type: 'reset' };

const d = workerData as Data;
let client: pg.Client | null = null;
let connecting = false;
/** Statements prepared once per SQL text, as the SQLite facade does (pg re-prepares on a new connection). */
const names = new Map<string, string>();
const MAX_NAMED = 500;
const nameOf = (sql: string): string | undefined => {
  let n = names.get(sql);
  if (n === undefined && names.size < MAX_NAMED) names.set(sql, (n = `s${names.size}`));
  return n;
};

const answer = (m: unknown) => {
  d.answers.postMessage(m);
  Atomics.store(d.flag, 0, 1);
  Atomics.notify(d.flag, 0);
};

/** Errors that mean the connection is gone, not that the statement was wrong. */
const connectionLost = (e: unknown): boolean => {
  const code = (e as { code?: unknown }).code;
  return typeof code !== 'string' || code.startsWith('08') || code.startsWith('57P') || /^E[A-Z]/.test(code);
};

function drop(): void {
  const c = client;
  client = null;
  // end() waits for the server; a server that stopped answering never does: cut the socket.
  (c as unknown as { connection?: { stream?: { destroy(): void } } } | null)?.connection?.stream?.destroy();
  c?.end().catch(() => {});
  parentPort!.postMessage({ type: 'down' });
  void connect();
}

async function connect(): Promise<void> {
  if (connecting) return;
  connecting = true;
  for (;;) {
    const c = new pg.Client({
      connectionString: d.url,
      connectionTimeoutMillis: d.connectTimeoutMs,
      statement_timeout: d.statementTimeoutMs,
      types: sqliteLikeTypes,
    });
    c.on('error', () => {
      if (client === c) drop();
    });
    try {
      await c.connect();
      await c.query('SELECT 1');
      client = c;
      connecting = false;
      parentPort!.postMessage({ type: 'up' });
      return;
    } catch (e) {
      c.end().catch(() => {});
      parentPort!.postMessage({ type: 'down', reason: explain(e) });
      await new Promise((r) => setTimeout(r, d.retryMs));
    }
  }
}

parentPort!.on('message', async (m: Request) => {
  if (m.type === 'reset') {
    if (client) drop();
    return;
  }
  const c = client;
  if (!c) return answer({ seq: m.seq, error: { message: 'the database is not reachable', lost: true } });
  try {
    const q = { name: nameOf(m.sql), text: m.sql, values: m.params };
    const r = m.rowMode === 'array' ? await c.query({ ...q, rowMode: 'array' as const }) : await c.query(q);
    answer({ seq: m.seq, rows: r.rows, rowCount: r.rowCount ?? 0 });
  } catch (e) {
    const err = e as { message?: string; code?: string; constraint?: string };
    const lost = connectionLost(e);
    answer({ seq: m.seq, error: { message: err.message ?? String(e), code: err.code, constraint: err.constraint, lost } });
    if (lost && client === c) drop();
  }
});

void connect();
