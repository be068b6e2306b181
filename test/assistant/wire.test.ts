/**
 * The chat over the real provider adapters against the protocol-faithful
 * fake servers (OpenAI Chat Completions SSE, Anthropic Messages SSE): a
 * multi-step task with tool calls whose arguments arrive in pieces, an
 * approval, an undo, and provider failures (a 401 key, a model without
 * tools, a stream that stalls) surfaced as `error` events.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { startFakeAnthropic, startFakeOpenAI, type FakeLlm } from '../helpers/fake-llm';
import { ofType, postSse } from './helpers';

for (const [name, start] of [
  ['openai', startFakeOpenAI],
  ['anthropic', startFakeAnthropic],
] as const) {
  describe(`assistant chat over the ${name} wire`, () => {
    let s: TestServer;
    let fake: FakeLlm;
    let root: string;
    let cleanup: () => void;
    let admin: string;
    const chat = (body: Record<string, unknown>) => postSse(`${s.url}/api/files/assistant/chat`, admin, body);

    before(async () => {
      ({ dir: root, cleanup } = tempDir(`filedock-wire-${name}-`));
      mkdirSync(join(root, 'Inbox'), { recursive: true });
      writeFileSync(join(root, 'Inbox/invoice-oct.txt'), 'Invoice October: 120 EUR');
      writeFileSync(join(root, 'Inbox/invoice-nov.txt'), 'Invoice November: 80 EUR');
      fake = await start({ models: ['fake-1'] });
      s = await startTestServer();
      admin = await s.login();
      const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Home', driver: 'local', config: { path: root } } });
      assert.equal(st.status, 200, JSON.stringify(st.body));
      const p = await s.api('PATCH', '/api/admin/assistant', {
        token: admin,
        body: { enabled: true, provider: name, address: fake.url, api_key: 'test-key', model: 'fake-1' },
      });
      assert.equal(p.status, 200, JSON.stringify(p.body));
    });
    after(async () => {
      await s?.close();
      await fake?.close();
      cleanup?.();
    });

    test('admin test lists the models and gets a reply', async () => {
      fake.play({ text: ['OK'] });
      const r = await s.api('POST', '/api/admin/assistant/test', { token: admin });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.models, ['fake-1']);
      assert.equal(r.body.reply, 'OK');
      const sent = fake.chats().at(-1)!;
      assert.ok(JSON.stringify(sent.tools).includes('stat'), 'a tool is on offer');
    });

    test('a multi-step task, an approval and an undo', async () => {
      fake.play(
        { text: ['Looking.'], tool_calls: [{ name: 'search', input: { query: 'invoice', path: '/Home' } }], stop: 'tool_use' },
        {
          tool_calls: [
            { name: 'mkdir', input: { path: '/Home/Invoices' } },
            { name: 'move', input: { from: '/Home/Inbox/invoice-oct.txt', to: '/Home/Invoices/invoice-oct.txt' } },
          ],
          stop: 'tool_use',
        },
        { tool_calls: [{ name: 'create_share_link', input: { path: '/Home/Invoices', days: 7 } }], stop: 'tool_use' },
      );
      const r = await chat({ message: "Put last month's invoices in a folder and share it for a week." });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(
        ofType(r.events, 'text')
          .map((e) => e.delta)
          .join(''),
        'Looking.',
      );
      const steps = ofType(r.events, 'step');
      assert.deepEqual(
        steps.map((x) => x.tool),
        ['search', 'mkdir', 'move'],
        JSON.stringify(r.events),
      );
      assert.ok(
        steps.every((x) => x.status === 'done'),
        JSON.stringify(steps),
      );
      assert.ok(existsSync(join(root, 'Invoices/invoice-oct.txt')));
      const approval = ofType(r.events, 'approval')[0];
      assert.equal(approval?.tool, 'create_share_link', JSON.stringify(r.events));
      // The tool results went back on the wire as the provider's tool messages.
      assert.match(JSON.stringify(fake.chats().at(-1)), /invoice-oct/);

      const id = ofType(r.events, 'conversation')[0].id;
      fake.play({ text: ['Shared for a week.'] });
      const d = await postSse(`${s.url}/api/files/assistant/conversations/${id}/decide`, admin, { approve: true });
      assert.equal(ofType(d.events, 'step')[0]?.status, 'done', JSON.stringify(d.events));
      assert.equal(ofType(d.events, 'done')[0]?.reason, 'end');

      const u = await s.api('POST', `/api/files/assistant/conversations/${id}/undo`, { token: admin, body: { step_id: steps[2].step_id } });
      assert.equal(u.status, 200, JSON.stringify(u.body));
      assert.ok(existsSync(join(root, 'Inbox/invoice-oct.txt')), 'moved back');
    });

    test('a refused key, a model without tools, a stalled and a malformed stream arrive as error events', async () => {
      fake.play({ error: 'unauthorized' });
      assert.equal(ofType((await chat({ message: 'a' })).events, 'error')[0]?.error, 'assistant_provider_key');
      fake.play({ error: 'no_tools' });
      assert.equal(ofType((await chat({ message: 'b' })).events, 'error')[0]?.error, 'assistant_no_tools');
      await s.api('PATCH', '/api/admin/assistant', { token: admin, body: { limits: { timeout_ms: 1000 } } });
      fake.play({ hang: 'mid_stream', text: ['Hm'] });
      const t0 = Date.now();
      const r = await chat({ message: 'c' });
      assert.equal(ofType(r.events, 'error')[0]?.error, 'assistant_timeout', JSON.stringify(r.events));
      assert.ok(Date.now() - t0 < 15_000);
      await s.api('PATCH', '/api/admin/assistant', { token: admin, body: { limits: { timeout_ms: 120_000 } } });
      fake.play({ malformed: true, text: ['Part'] });
      const m = await chat({ message: 'd' });
      assert.equal(ofType(m.events, 'error')[0]?.error, 'assistant_provider', JSON.stringify(m.events));
      // The conversation is free again after each failure.
      fake.play({ text: ['Fine now.'] });
      const ok = await chat({ conversation_id: ofType(m.events, 'conversation')[0].id, message: 'e' });
      assert.equal(ofType(ok.events, 'done')[0]?.reason, 'end', JSON.stringify(ok.events));
    });
  });
}
