/**
 * The assistant's own cost, with a scripted in-process model (no provider time):
 *  1. server overhead per tool step: from the end of one model turn (its last
 *     event consumed) to the start of the next turn, i.e. parsing, the access
 *     checks, the tool itself, the step row, the history save and the SSE
 *     frames. Target: p99 < 20 ms.
 *  2. listing p99 of a 1,000-entry folder, idle against while 20 conversations
 *     stream text (a delta every 10 ms each). Target: within 10 % of idle.
 * Server and clients share one process here (the model is in-process), so
 * both listing figures carry the same client cost.
 *
 *   node --import tsx bench/assistant.ts        (BENCH_CHATS=30, BENCH_SECONDS=8)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer } from '../test/helpers/server';
import { tempDir } from '../test/helpers/tools';
import { postSse } from '../test/assistant/helpers';
import type { ChatProvider, ProviderEvent, ProviderFactory } from '../server/assistant/providers/types';
import { sleep, table } from './lib';

const CHATS = Number(process.env.BENCH_CHATS ?? 30);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const ms = (x: number) => x.toFixed(2);

type Mode = { kind: 'steps' } | { kind: 'stream'; untilMs: number } | { kind: 'first' };
let firstYield = 0;
let mode: Mode = { kind: 'steps' };
const overheads: number[] = [];
const byTool = new Map<string, number[]>();
let lastTool = '';
let lastEnd = 0;
let lastCpu = process.cpuUsage();
const cpus: number[] = [];
let callN = 0;

const STEPS = (i: number): Array<{ name: string; input: Record<string, unknown> }> => [
  { name: 'list', input: { path: '/Home/Big' } },
  { name: 'stat', input: { path: '/Home/Big/f-00001.txt' } },
  { name: 'read', input: { path: '/Home/Big/f-00002.txt' } },
  { name: 'mkdir', input: { path: `/Home/Work/d-${i}` } },
  { name: 'rename', input: { path: `/Home/Work/d-${i}`, name: `e-${i}` } },
];

const provider: ChatProvider = {
  async listModels() {
    return ['bench'];
  },
  async *stream(req) {
    if (mode.kind === 'first') {
      firstYield = performance.now();
      yield { type: 'text', text: 'Hello' };
      yield { type: 'stop', reason: 'end' };
      return;
    }
    if (mode.kind === 'stream') {
      while (Date.now() < mode.untilMs && !req.signal.aborted) {
        yield { type: 'text', text: 'token ' };
        await sleep(10);
      }
      yield { type: 'stop', reason: 'end' };
      return;
    }
    if (lastEnd) {
      const d = performance.now() - lastEnd;
      overheads.push(d);
      const c = process.cpuUsage(lastCpu);
      cpus.push((c.user + c.system) / 1000);
      byTool.set(lastTool, [...(byTool.get(lastTool) ?? []), d]);
    }
    const done = req.messages.filter((m) => m.role === 'tool').length;
    const first = req.messages.find((m) => m.role === 'user');
    const steps = STEPS(Number(/\d+/.exec(first?.role === 'user' ? first.content : '')?.[0] ?? 0));
    callN++;
    const events: ProviderEvent[] =
      done % steps.length === 0 && req.messages.at(-1)?.role === 'tool'
        ? [
            { type: 'text', text: 'done' },
            { type: 'stop', reason: 'end' },
          ]
        : [
            { type: 'tool_call', call: { id: `c${callN}`, ...steps[done % steps.length] } },
            { type: 'stop', reason: 'tool_use' },
          ];
    for (const e of events) yield e;
    lastTool = events[0].type === 'tool_call' ? events[0].call.name : '';
    lastEnd = events.some((e) => e.type === 'tool_call') ? performance.now() : 0;
    lastCpu = process.cpuUsage();
  },
};
const factory: ProviderFactory = () => provider;

async function listingLatencies(s: Awaited<ReturnType<typeof startTestServer>>, token: string, untilMs: number): Promise<number[]> {
  const out: number[] = [];
  while (Date.now() < untilMs) {
    const t0 = performance.now();
    const r = await fetch(`${s.url}/api/files/manager?path=${encodeURIComponent('/Home/Big')}&limit=1000`, { headers: { authorization: `Bearer ${token}` } });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`listing ${r.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

async function main() {
  const { dir, cleanup } = tempDir('bench-assistant-');
  mkdirSync(join(dir, 'Big'));
  mkdirSync(join(dir, 'Work'));
  for (let i = 0; i < 1000; i++) writeFileSync(join(dir, 'Big', `f-${String(i).padStart(5, '0')}.txt`), `file ${i}\n`);
  const s = await startTestServer({ SERVICE_LOG_LEVEL: 'error' }, { assistantProvider: factory });
  try {
    const admin = await s.login();
    await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Home', driver: 'local', config: { path: dir } } });
    await s.api('PATCH', '/api/admin/assistant', { token: admin, body: { enabled: true, provider: 'ollama', model: 'bench', limits: { per_minute: 1000 } } });
    await s.api('GET', '/api/files/manager?path=/Home/Big', { token: admin });

    // 1. Per-step overhead.
    for (let i = 0; i < CHATS; i++) {
      lastEnd = 0;
      const r = await postSse(`${s.url}/api/files/assistant/chat`, admin, { message: `task ${i}` });
      const bad = r.events.filter((e) => e.event === 'error' || (e.event === 'step' && e.data.status !== 'done'));
      if (bad.length) throw new Error(JSON.stringify(bad));
    }
    const warm = overheads.slice(STEPS(0).length); // the first chat warms the code paths
    table(
      'per tool (ms)',
      [...byTool].map(([tool, xs]) => ({ tool, n: xs.length, p50: ms(pct(xs, 50)), p99: ms(pct(xs, 99)) })),
    );
    const warmCpu = cpus.slice(STEPS(0).length);
    table('assistant: server overhead per tool step (ms)', [
      { measure: 'wall', steps: warm.length, p50: ms(pct(warm, 50)), p99: ms(pct(warm, 99)), max: ms(Math.max(...warm)), target: '< 20 ms p99' },
      { measure: 'CPU (user+system)', steps: warmCpu.length, p50: ms(pct(warmCpu, 50)), p99: ms(pct(warmCpu, 99)), max: ms(Math.max(...warmCpu)), target: '' },
    ]);
    console.log(
      `load average during the run: ${(await import('node:os'))
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')} on ${(await import('node:os')).cpus().length} cores`,
    );

    // 1b. The first text token: from the model's yield to the client reading the `text` frame.
    mode = { kind: 'first' };
    const firsts: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${s.url}/api/files/assistant/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `first ${i}` }),
      });
      const reader = res.body!.getReader();
      let seen = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += Buffer.from(value).toString();
        if (seen.includes('event: text')) {
          firsts.push(performance.now() - firstYield);
          break;
        }
      }
      await reader.cancel().catch(() => undefined);
    }
    table('assistant: first text frame after the model yields it (ms)', [
      { n: firsts.slice(5).length, p50: ms(pct(firsts.slice(5), 50)), p99: ms(pct(firsts.slice(5), 99)), target: '< 50 ms' },
    ]);

    // 2. Listing idle vs with 20 streaming conversations.
    const idle = await listingLatencies(s, admin, Date.now() + SECONDS * 1000);
    const until = Date.now() + SECONDS * 1000 + 1000;
    mode = { kind: 'stream', untilMs: until };
    let frames = 0;
    const streams = Array.from({ length: 20 }, (_, i) =>
      postSse(`${s.url}/api/files/assistant/chat`, admin, { message: `stream ${i}` }).then((r) => (frames += r.events.length)),
    );
    await sleep(500);
    const busy = await listingLatencies(s, admin, until - 500);
    await Promise.all(streams);
    table('assistant: 1,000-entry listing latency (ms)', [
      { load: 'idle', n: idle.length, p50: ms(pct(idle, 50)), p99: ms(pct(idle, 99)) },
      { load: '20 streaming conversations', n: busy.length, p50: ms(pct(busy, 50)), p99: ms(pct(busy, 99)), 'stream frames': frames },
    ]);
    console.log(`p99 ratio loaded/idle: ${(pct(busy, 99) / pct(idle, 99)).toFixed(2)}`);
  } finally {
    await s.close();
    cleanup();
  }
}

await main();
