/**
 * Tenants (docs/tenants.md, "Step 1: assistant and vault"): two tenants with the same admin, storage name and
 * paths. The assistant's conversations, steps and choices are the person's tenant's: another tenant's
 * conversation and step answer every door like missing ones (404 `assistant_not_found`), and the retention
 * sweep runs tenant by tenant; an MCP key acts in its own tenant only. The vault: another tenant's encrypted
 * folder answers like a missing one (404 `not_found`), its people are not offered, and naming another tenant's
 * person (who has a vault there) as a member is refused exactly as naming someone who does not exist.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { addTenantRow, onHost, type HostAnswer } from '../helpers/tenants';
import { b64u, vaultBody } from '../helpers/vault';
import { call, calls, ofType, postSse, say, scripted, type Script } from '../assistant/helpers';

const SAME = { email: 'sam@example.test', password: 'same-password-1' };
const MISSING = 987654321;

describe('tenants: the assistant and the vault', () => {
  let s: TestServer;
  let script: Script;
  const cleanups: Array<() => void> = [];
  const clients: Client[] = [];
  const t: Record<'alpha' | 'beta', { id: number; on: ReturnType<typeof onHost>; token: string; me: number }> = {} as never;

  const ok = (r: HostAnswer, what: string) => {
    assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const answer = (r: HostAnswer) => `${r.status} ${r.body?.error ?? ''}`;
  const chat = (slug: 'alpha' | 'beta', body: Record<string, unknown>) => postSse(`${s.url}/t/${slug}/api/files/assistant/chat`, t[slug].token, body);

  before(async () => {
    script = scripted();
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' }, { assistantProvider: script.factory });
    for (const slug of ['alpha', 'beta'] as const) {
      const id = await addTenantRow(s, slug, [`${slug}.example.test`]);
      await s.server.services.auth.users.create({ tenant_id: id }, { ...SAME, role: 'admin' });
      const on = onHost(s, `${slug}.example.test`);
      const token = ok(await on('POST', '/api/auth/login', { body: SAME }), `${slug} sign-in`).token as string;
      const root = tempDir(`filedock-tav-${slug}-`);
      cleanups.push(root.cleanup);
      writeFileSync(join(root.dir, 'shared.txt'), `${slug} text`);
      if (slug === 'beta') writeFileSync(join(root.dir, 'beta-only.txt'), 'beta secret');
      ok(
        await on('POST', '/api/admin/storages', { token, body: { name: 'Docs', driver: 'local', rbac_enabled: false, config: { path: root.dir } } }),
        'storage',
      );
      const me = ok(await on('GET', '/api/auth/me', { token }), 'me').user.id as number;
      t[slug] = { id, on, token, me };
    }
    // The assistant's settings are the installation's: the platform operator turns it on.
    const operator = await s.login();
    const p = await s.api('PATCH', '/api/admin/assistant', { token: operator, body: { enabled: true, provider: 'openai', model: 'scripted-1', api_key: 'k' } });
    assert.equal(p.status, 200, JSON.stringify(p.body));
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await s?.close();
    for (const c of cleanups) c();
  });

  test('assistant: another tenant’s conversation and step answer like missing ones; choices and the sweep stay in their tenant', async () => {
    script.turns.push(
      () => calls(call('mkdir', { path: '/Docs/made-by-beta' })),
      () => say('Done.'),
    );
    const made = await chat('beta', { message: 'make a folder' });
    const [step] = ofType(made.events, 'step');
    assert.equal(step?.status, 'done', JSON.stringify(made));
    const conv = ofType(made.events, 'conversation')[0].id as string;
    const { alpha, beta } = t;

    // Each door alpha's admin can name a conversation or a step at: beta's answers as a missing one.
    const doors = (id: string, stepId: string) => [
      () => alpha.on('GET', `/api/files/assistant/conversations/${id}`, { token: alpha.token }),
      () => alpha.on('DELETE', `/api/files/assistant/conversations/${id}`, { token: alpha.token }),
      () => alpha.on('POST', `/api/files/assistant/conversations/${id}/undo`, { token: alpha.token, body: { step_id: stepId } }),
      () => alpha.on('POST', `/api/files/assistant/conversations/${id}/decide`, { token: alpha.token, body: { approve: true } }),
      () => alpha.on('POST', '/api/files/assistant/chat', { token: alpha.token, body: { conversation_id: id, message: 'hello' } }),
    ];
    const theirs = doors(conv, step.step_id);
    const missing = doors(`conv_${'0'.repeat(24)}`, `step_${'0'.repeat(24)}`);
    for (let i = 0; i < theirs.length; i++) {
      const [a, m] = [await theirs[i](), await missing[i]()];
      assert.equal(answer(a), '404 assistant_not_found', `door ${i}: ${JSON.stringify(a.body)}`);
      assert.equal(answer(a), answer(m), `door ${i}`);
    }
    assert.deepEqual(ok(await alpha.on('GET', '/api/files/assistant/conversations', { token: alpha.token }), 'alpha list').conversations, []);
    // Beta's conversation is whole: its step is still there to undo, once.
    const mine = ok(await beta.on('GET', `/api/files/assistant/conversations/${conv}`, { token: beta.token }), 'beta conversation');
    assert.deepEqual(
      mine.steps.map((x: { id: string; undo: boolean }) => [x.id, x.undo]),
      [[step.step_id, true]],
    );
    ok(await beta.on('POST', `/api/files/assistant/conversations/${conv}/undo`, { token: beta.token, body: { step_id: step.step_id } }), 'beta undo');

    // A choice is its person's, in their tenant.
    ok(await beta.on('PUT', '/api/files/assistant/prefs', { token: beta.token, body: { confirm_all: true } }), 'beta prefs');
    assert.equal(ok(await alpha.on('GET', '/api/files/assistant', { token: alpha.token }), 'alpha state').confirm_all, false);
    assert.equal(ok(await beta.on('GET', '/api/files/assistant', { token: beta.token }), 'beta state').confirm_all, true);

    // Retention tenant by tenant: alpha's sweep leaves beta's old conversation, beta's takes it.
    await s.server.db.async.sql('UPDATE assistant_conversations SET last_used_at = ? WHERE tenant_id = ? AND id = ?', [
      new Date(Date.now() - 400 * 86_400_000).toISOString(),
      beta.id,
      conv,
    ]);
    assert.equal(await s.server.services.assistant.sweep({ tenant_id: alpha.id }), 0);
    assert.equal((await beta.on('GET', `/api/files/assistant/conversations/${conv}`, { token: beta.token })).status, 200);
    assert.equal(await s.server.services.assistant.sweep({ tenant_id: beta.id }), 1);
  });

  test('assistant: the link create_share_link answers opens in the person’s tenant', async () => {
    script.turns.push(() => calls(call('create_share_link', { path: '/Docs/beta-only.txt' })));
    const asked = await chat('beta', { message: 'share it' });
    const conv = ofType(asked.events, 'conversation')[0].id as string;
    assert.ok(ofType(asked.events, 'approval')[0], JSON.stringify(asked.events));
    script.turns.push(() => say('Shared.'));
    const d = await postSse(`${s.url}/t/beta/api/files/assistant/conversations/${conv}/decide`, t.beta.token, { approve: true });
    const [step] = ofType(d.events, 'step');
    assert.equal(step?.status, 'done', JSON.stringify(d.events));
    const url = JSON.parse(step.result as string).url as string;
    // No public URL here: the tenant's prefix, relative, which opens in beta from any address of the installation.
    assert.match(url, /^\/t\/beta\/s\/[\w-]+$/);
    assert.equal((await fetch(`${s.url}${url}`)).status, 200);
    assert.equal((await fetch(`${s.url}${url.replace('/t/beta', '')}`)).status, 404, 'without the prefix it is tenant 1’s address');
  });

  test('MCP: a tenant’s key lists, reads and searches its own tenant’s files only', async () => {
    const { alpha } = t;
    const key = ok(await alpha.on('POST', '/api/auth/keys', { token: alpha.token, body: { name: 'agent', verbs: ['files:read', 'ai.use'] } }), 'alpha key')
      .token as string;
    const c = new Client({ name: 'tenant-agent', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/t/alpha/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(c);
    const text = (r: any) => (r.content as Array<{ text: string }>)[0].text;
    const listed = text(await c.callTool({ name: 'list', arguments: { path: '/Docs' } }));
    assert.match(listed, /shared\.txt/);
    assert.doesNotMatch(listed, /beta-only/);
    assert.equal(text(await c.callTool({ name: 'read', arguments: { path: '/Docs/shared.txt' } })).includes('alpha text'), true);
    const theirs = await c.callTool({ name: 'read', arguments: { path: '/Docs/beta-only.txt' } });
    const missing = await c.callTool({ name: 'read', arguments: { path: '/Docs/nowhere.txt' } });
    assert.equal(theirs.isError, true);
    assert.equal(JSON.parse(text(theirs)).error, JSON.parse(text(missing)).error);
    assert.doesNotMatch(text(await c.callTool({ name: 'search', arguments: { query: 'beta' } })), /beta-only/);
  });

  test('vault: another tenant’s folder answers like a missing one; its people are neither offered nor taken as members', async () => {
    const { alpha, beta } = t;
    for (const x of [alpha, beta]) ok(await x.on('PUT', '/api/vault', { token: x.token, body: vaultBody().body }), 'vault');
    const folder = async (x: typeof alpha, path: string) => {
      const id = ok(await x.on('POST', '/api/vault/folders', { token: x.token, body: { path } }), 'folder').folder.id as number;
      const members = [{ user_id: x.me, wrapped_key: b64u(125) }];
      return ok(await x.on('PUT', `/api/vault/folders/${id}/members`, { token: x.token, body: { key_version: 1, members } }), 'members').folder;
    };
    const secret = await folder(beta, '/Docs/Secret');
    const members = (ids: number[]) => ({ key_version: 2, members: ids.map((user_id) => ({ user_id, wrapped_key: b64u(125) })) });
    for (const [what, req] of [
      ['GET', (id: number) => alpha.on('GET', `/api/vault/folders/${id}`, { token: alpha.token })],
      ['members', (id: number) => alpha.on('PUT', `/api/vault/folders/${id}/members`, { token: alpha.token, body: members([alpha.me]) })],
    ] as const) {
      const [theirs, missing] = [await req(secret.id), await req(MISSING)];
      assert.equal(answer(theirs), '404 not_found', `${what}: ${JSON.stringify(theirs.body)}`);
      assert.equal(answer(theirs), answer(missing), what);
    }
    assert.deepEqual(ok(await alpha.on('GET', '/api/vault/folders', { token: alpha.token }), 'alpha folders').folders, []);
    const offered = ok(await alpha.on('GET', '/api/vault/people', { token: alpha.token }), 'alpha people').people as Array<{ id: number }>;
    assert.ok(!offered.some((p) => p.id === beta.me), `beta's person is not offered: ${JSON.stringify(offered)}`);

    // Alpha's own folder: beta's person (who has a vault, in beta) is refused as someone without one, like a missing id.
    const mine = await folder(alpha, '/Docs/Mine');
    assert.deepEqual([mine.owner, mine.members.map((m: { id: number }) => m.id)], [{ id: alpha.me, name: mine.owner.name }, [alpha.me]]);
    assert.ok(mine.owner.name, 'the owner’s name is read in the folder’s tenant');
    const withBeta = await alpha.on('PUT', `/api/vault/folders/${mine.id}/members`, { token: alpha.token, body: members([alpha.me, beta.me]) });
    const withMissing = await alpha.on('PUT', `/api/vault/folders/${mine.id}/members`, { token: alpha.token, body: members([alpha.me, MISSING]) });
    assert.deepEqual(
      [withBeta.status, withBeta.body.error, withBeta.body.details?.without_vault],
      [400, 'validation_failed', [beta.me]],
      JSON.stringify(withBeta.body),
    );
    assert.deepEqual([withMissing.status, withMissing.body.error], [withBeta.status, withBeta.body.error]);
    // Beta's folder is untouched, and still beta's.
    const still = ok(await beta.on('GET', `/api/vault/folders/${secret.id}`, { token: beta.token }), 'beta folder').folder;
    assert.deepEqual([still.key_version, still.members.map((m: { id: number }) => m.id)], [1, [beta.me]]);
  });
});
