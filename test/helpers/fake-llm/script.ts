/**
 * The common part of the fake LLM servers: a loopback HTTP server that records
 * every request and answers each chat request with the next scripted turn,
 * written frame by frame in the dialect's wire format (SSE or NDJSON). The
 * dialect files (anthropic.ts, openai.ts, ollama.ts) only say how a turn, an
 * error and a models listing look on their wire.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export type ScriptedToolCall = {
  id?: string;
  name: string;
  input: Record<string, unknown>;
  /** Into how many deltas the arguments' JSON text is cut (default 3; Ollama sends each call whole). */
  pieces?: number;
};

/** A model reply: text chunks in order, then tool calls; `gap_ms` between frames. */
export type Reply = {
  text?: string[];
  tool_calls?: ScriptedToolCall[];
  usage?: { input: number; output: number };
  stop?: 'end' | 'tool_use' | 'max_tokens';
  gap_ms?: number;
};

export type Turn =
  | Reply
  /** The provider's real error status and body for: a bad key, a model without tools, a prompt too long, a server fault. */
  /** With `in_stream`, the error comes inside a 200 stream after the `text` frames (SSE `error` event, an `error` line). */
  | { error: ErrorKind; in_stream?: boolean; text?: string[] }
  /** Never finishes: no headers at all, or the start of a reply (with `text`) and then silence. */
  | { hang: 'before_headers' | 'mid_stream'; text?: string[] }
  /** Starts a reply, then sends a frame whose JSON breaks off, and ends the response. */
  | { malformed: true; text?: string[] };

export type ErrorKind = 'unauthorized' | 'no_tools' | 'too_long' | 'server';

/** One frame on the wire; `token` marks the frame that carries a text token. */
export type Frame = { data: string; token?: boolean };

export interface Dialect {
  chatPath: string;
  modelsPath: string;
  contentType: string;
  /** The frames of a whole reply, in order (request: the parsed request body). */
  frames(turn: Reply, request: Record<string, unknown>): Frame[];
  /** A frame whose JSON is cut short. */
  broken(): string;
  error(kind: ErrorKind, request: Record<string, unknown>): { status: number; body: unknown };
  /** The same error as a frame inside a stream that already began. */
  streamError(kind: ErrorKind): string;
  models(names: string[]): unknown;
}

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface FakeLlm {
  /** The address to give the adapter (the dialect's base, e.g. `http://127.0.0.1:PORT`). */
  url: string;
  /** Every request received, in order (models listings too). */
  requests: Recorded[];
  /** Bodies of the chat requests only. */
  chats(): Record<string, unknown>[];
  /** performance.now() when each reply's first text token was written. */
  firstTokenAt: number[];
  /** performance.now() when each text token was written, all replies together. */
  tokenAt: number[];
  /** How many chat responses have closed (ended, or dropped by the client). */
  closed(): number;
  /** Appends turns to the script. */
  play(...turns: Turn[]): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return { _unparsed: text };
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Splits `text` into `n` nearly equal pieces (at least one; empty pieces are never made). */
export function cut(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, n)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

export async function startFake(dialect: Dialect, opts: { models?: string[]; turns?: Turn[] } = {}): Promise<FakeLlm> {
  const script: Turn[] = [...(opts.turns ?? [])];
  const requests: Recorded[] = [];
  const firstTokenAt: number[] = [];
  const tokenAt: number[] = [];
  let closed = 0;
  const models = opts.models ?? ['fake-model-a', 'fake-model-b'];

  async function chat(res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    res.once('close', () => closed++);
    const turn = script.shift();
    if (!turn) return json(res, 500, { error: 'fake-llm: script exhausted' });
    if ('error' in turn && turn.error && !turn.in_stream) {
      const e = dialect.error(turn.error, body);
      return json(res, e.status, e.body);
    }
    if ('hang' in turn && turn.hang === 'before_headers') return; // the socket stays open, silent
    res.writeHead(200, { 'content-type': dialect.contentType, 'cache-control': 'no-cache' });
    res.flushHeaders();
    const reply: Reply = 'hang' in turn || 'malformed' in turn || 'error' in turn ? { text: turn.text } : (turn as Reply);
    const frames = dialect.frames(reply, body);
    let marked = false;
    const write = (f: Frame) => {
      if (res.destroyed) return;
      res.write(f.data);
      if (f.token) {
        const now = performance.now();
        tokenAt.push(now);
        if (!marked) firstTokenAt.push(now);
        marked = true;
      }
    };
    if ('hang' in turn && turn.hang === 'mid_stream') {
      // Everything up to and including the last text frame, then silence.
      const lastToken = frames.map((f) => !!f.token).lastIndexOf(true);
      frames.slice(0, lastToken + 1).forEach(write);
      return;
    }
    if ('malformed' in turn && turn.malformed) {
      const lastToken = frames.map((f) => !!f.token).lastIndexOf(true);
      frames.slice(0, lastToken + 1).forEach(write);
      res.end(dialect.broken());
      return;
    }
    if ('error' in turn && turn.error) {
      const lastToken = frames.map((f) => !!f.token).lastIndexOf(true);
      frames.slice(0, lastToken + 1).forEach(write);
      res.end(dialect.streamError(turn.error));
      return;
    }
    const gap = reply.gap_ms ?? 0;
    for (const f of frames) {
      write(f);
      if (gap > 0) await sleep(gap);
    }
    res.end();
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = (req.url ?? '/').split('?')[0];
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
      if (req.method === 'GET' && path === dialect.modelsPath) return json(res, 200, dialect.models(models));
      if (req.method === 'POST' && path === dialect.chatPath) return chat(res, body);
      json(res, 404, { error: `fake-llm: no route ${req.method} ${path}` });
    })().catch((e: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(e) });
      else res.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    chats: () => requests.filter((r) => r.path === dialect.chatPath).map((r) => r.body),
    firstTokenAt,
    tokenAt,
    closed: () => closed,
    play: (...turns) => void script.push(...turns),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections(); // hung replies included
        server.close(() => r());
      }),
  };
}
