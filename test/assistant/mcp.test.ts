/**
 * The file tools over MCP (streamable HTTP at /api/mcp) on a real server,
 * reached with the SDK's own client and an API key: tools listed, list /
 * read / write as the key's owner, a key confined to a folder cannot read
 * outside it, bad arguments come back as tool errors, a key without `ai.use`
 * is refused, and every file content read is audited.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const KAI = { email: 'kai@example.test', username: 'kai', password: 'kai-password-1' };

describe('MCP file tools over streamable HTTP', () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  const clients: Client[] = [];

  const connect = async (token: string) => {
    const c = new Client({ name: 'test-agent', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(c);
    return c;
  };
  const text = (r: any) => (r.content as Array<{ type: string; text: string }>)[0].text;
  const key = async (token: string, body: Record<string, unknown>) => {
    const r = await s.api('POST', '/api/auth/keys', { token, body });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.token as string;
  };

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-mcp-'));
    mkdirSync(join(root, 'Work'), { recursive: true });
    mkdirSync(join(root, 'Private'), { recursive: true });
    writeFileSync(join(root, 'Work/plan.txt'), 'the plan: ship it');
    writeFileSync(join(root, 'Private/diary.txt'), 'secret diary');
    writeFileSync(join(root, 'Work/blob.bin'), Buffer.from([0, 1, 2, 3, 0, 255, 0]));
    writeFileSync(join(root, 'Work/big.txt'), 'x'.repeat(100_000));
    s = await startTestServer();
    const admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Home', driver: 'local', config: { path: root } },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    await s.api('POST', '/api/admin/users', { token: admin, body: { ...KAI, role: 'user' } });
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await s?.close();
    cleanup?.();
  });

  test('a key with ai.use lists the tools and lists, reads and writes files as its owner', async () => {
    const kai = await s.login(KAI.email, KAI.password);
    const c = await connect(await key(kai, { name: 'agent', verbs: ['files:read', 'files:write', 'ai.use'] }));
    const tools = (await c.listTools()).tools.map((t) => t.name);
    for (const n of [
      'list',
      'search',
      'read',
      'stat',
      'mkdir',
      'move',
      'rename',
      'copy',
      'write_text',
      'delete',
      'create_share_link',
      'revoke_link',
      'create_drop_link',
      'extract',
      'cancel_job',
    ]) {
      assert.ok(tools.includes(n), `tool ${n} offered`);
    }
    for (const n of tools) assert.doesNotMatch(n, /upload|ticket|bell|admin|user/, 'no upload ticket, bell or admin tool');

    const listed = JSON.parse(text(await c.callTool({ name: 'list', arguments: { path: '/Home/Work' } })));
    assert.deepEqual(listed.entries.map((e: any) => e.name).sort(), ['big.txt', 'blob.bin', 'plan.txt']);

    const read = JSON.parse(text(await c.callTool({ name: 'read', arguments: { path: '/Home/Work/plan.txt' } })));
    assert.equal(read.content, 'the plan: ship it');

    const big = JSON.parse(text(await c.callTool({ name: 'read', arguments: { path: '/Home/Work/big.txt' } })));
    assert.equal(big.content.length, 32 * 1024, 'text is cut to 32 KiB');
    assert.equal(big.truncated, true);

    const bin = await c.callTool({ name: 'read', arguments: { path: '/Home/Work/blob.bin' } });
    assert.equal(bin.isError, true, 'binary bytes are never sent');

    const w = await c.callTool({ name: 'write_text', arguments: { path: '/Home/Work/notes.txt', content: 'written by an agent' } });
    assert.notEqual(w.isError, true, text(w));
    assert.equal(readFileSync(join(root, 'Work/notes.txt'), 'utf8'), 'written by an agent');

    // Every file content that left the server is in the audit log with its size.
    const admin = await s.login();
    const audit = await s.api('GET', '/api/admin/audit?action=assistant.content_sent', { token: admin });
    assert.equal(audit.status, 200, JSON.stringify(audit.body));
    const rows = audit.body.events as any[];
    const plan = rows.find((r: any) => r.resource === '/Home/Work/plan.txt');
    assert.ok(plan, `audited: ${JSON.stringify(rows).slice(0, 500)}`);
  });

  test('bad arguments and unreachable paths are tool errors, not failures', async () => {
    const kai = await s.login(KAI.email, KAI.password);
    const c = await connect(await key(kai, { name: 'agent2', verbs: ['files:read', 'ai.use'] }));
    const bad = await c.callTool({ name: 'read', arguments: { nope: 1 } });
    assert.equal(bad.isError, true);
    const missing = await c.callTool({ name: 'stat', arguments: { path: '/Home/Work/none.txt' } });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /not_found/);
    // A read-only key cannot write through the tools either.
    const w = await c.callTool({ name: 'write_text', arguments: { path: '/Home/Work/x.txt', content: 'x' } });
    assert.equal(w.isError, true);
    assert.match(text(w), /permission_denied|forbidden/);
  });

  test('a key confined to a folder cannot read outside it', async () => {
    const kai = await s.login(KAI.email, KAI.password);
    const c = await connect(await key(kai, { name: 'confined', verbs: ['files:read', 'files:write', 'ai.use'], root: '/Home/Work' }));
    const ok = JSON.parse(text(await c.callTool({ name: 'read', arguments: { path: '/Home/Work/plan.txt' } })));
    assert.equal(ok.content, 'the plan: ship it');
    const out = await c.callTool({ name: 'read', arguments: { path: '/Home/Private/diary.txt' } });
    assert.equal(out.isError, true);
    assert.doesNotMatch(text(out), /secret diary/);
    const mv = await c.callTool({ name: 'move', arguments: { from: '/Home/Work/plan.txt', to: '/Home/Private/plan.txt' } });
    assert.equal(mv.isError, true);
    assert.equal(readFileSync(join(root, 'Work/plan.txt'), 'utf8'), 'the plan: ship it');
  });

  test('keys: the chat is for a person (session_required); admin keys reach the settings under /api/ai/admin', async () => {
    const kai = await s.login(KAI.email, KAI.password);
    const agent = await key(kai, { name: 'agent3', verbs: ['files:read', 'files:write', 'ai.use'] });
    const c = await s.api('POST', '/api/files/assistant/chat', { token: agent, body: { message: 'hi' } });
    assert.equal(c.status, 403);
    assert.equal(c.body.error, 'session_required');
    const caps = await s.api('GET', '/api/capabilities', { token: agent });
    assert.equal(caps.body.assistant.button, false, 'no button for a key');
    const admin = await s.login();
    const adminKey = await key(admin, { name: 'ops', verbs: ['admin'] });
    const g = await s.api('GET', '/api/ai/admin/assistant', { token: adminKey });
    assert.equal(g.status, 200, JSON.stringify(g.body));
    assert.equal(g.body.api_key_set, false);
    assert.equal((await s.api('GET', '/api/ai/admin/assistant', { token: agent })).status, 403);
  });

  test('a key without ai.use is refused at the door', async () => {
    const kai = await s.login(KAI.email, KAI.password);
    const token = await key(kai, { name: 'plain', verbs: ['files:read'] });
    const r = await fetch(`${s.url}/api/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(r.status, 403);
    assert.equal((await r.json()).error, 'permission_denied');
  });
});
