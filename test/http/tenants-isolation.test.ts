/**
 * Multi-tenant isolation over every route (docs/tenants.md, step 3). Two tenants, alpha and beta, neither the
 * platform's, each with a person of the same e-mail and password and a storage of the same name holding the same
 * paths. Every route of the routers' table is called by alpha's admin on alpha's host twice: once with beta's
 * identifiers (its ids, node ids, link tokens, paths that exist only in beta) and once with identifiers that
 * exist nowhere. The two answers must be the same (status and error code): anything else tells alpha that beta's
 * thing exists, or acts on it. No answer may carry a beta marker, and beta's things are unchanged at the end.
 *
 * The request values come from the OpenAPI document's schemas (the routers' table and the document are the
 * same set: openapi.test.ts). A route parameter or id field this suite cannot fill with a beta thing must be
 * listed in NO_BETA_THING with its reason, so a new route fails here until someone decided how it is isolated.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server';
import { sshKeyLine, tempDir } from '../helpers/tools';
import { addTenantRow, onHost, type HostAnswer } from '../helpers/tenants';
import { startFakeOpenAI, type FakeLlm } from '../helpers/fake-llm';
import { b64u, vaultBody } from '../helpers/vault';
import { ofType, postSse } from '../assistant/helpers';
import { buildAppPackage, publisherKey, sampleManifest } from '../helpers/app-package';
import { ReplicationRepo } from '../../server/replication/replication.repo';

const ALPHA = 'alpha.example.test';
const BETA = 'beta.example.test';
const SAME = { email: 'sam@example.test', password: 'same-password-1' };
const R = randomBytes(4).toString('hex');
/** Names and words found only in beta: none may appear in an answer to alpha. */
const B_ONLY_FILE = `b-only-${R}.txt`;
const B_SECRET = `beta-secret-${R}`;
const B_PERSON = `only-beta-${R}@example.test`;
const MISSING_ID = 987654321;
const BETA_HOOK = `http://127.0.0.1:9/beta-hook-${R}`;
const BETA_APP = `beta-app-${R}`;
const BETA_APP_SETTING = `beta-app-setting-${R}`;
const BETA_TARGET = `beta-target-${R}`;

/** Route parameters and id fields with no beta thing made here, and why; each is filled with a missing value on both sides. */
const NOT_AN_ID = 'not the id of a tenant’s row';
const APPS_INSTALLATION = 'the installation’s, the platform operator’s (docs/tenants.md, "Step 1: apps"): supertenant_only to a tenant admin';
const NO_BETA_THING: Record<string, string> = {
  '/api/admin/app-plugins/keys/:id id': APPS_INSTALLATION,
  '/api/admin/app-plugins/license-revocations license_id': APPS_INSTALLATION,
  '/api/admin/app-plugins/license-revocations/:id id': APPS_INSTALLATION,
  '/api/admin/app-plugins/store-keys/:id id': APPS_INSTALLATION,
  '/api/admin/app-store/stores/:id id': APPS_INSTALLATION,
  '/api/admin/app-store/stores/:id/media id': APPS_INSTALLATION,
  '/api/admin/app-store/stores/:id/refresh id': APPS_INSTALLATION,
  '/api/files/ops/:id id': 'ops are scoped: an op moved to another tenant answers 404 (ops-realtime.test.ts)',
  '/api/files/ops/:id/cancel id': 'as above',
  '/api/files/versions/raw id': 'a version needs versioning on and a second write; versions are scoped (server/protection/versions.repo.test.ts)',
  '/api/files/versions/restore id': 'as above',
  '/api/auth/mfa/passkeys id': 'a passkey made needs a WebAuthn authenticator (mfa-passkeys.test.ts); passkeys are scoped with their person',
  '/api/auth/mfa/passkeys rawId': 'as above',
  '/api/auth/mfa/passkeys/:id id': 'as above',
  '/api/public/s/:token/ops/:id id': 'an op of a public link’s app action (apps-public.test.ts); ops are scoped',
  '/api/public/s/:token/event action_id': NOT_AN_ID,
  '/api/files/plugins/views/:plugin/:view/event action_id': NOT_AN_ID,
  '/api/admin/auth/oidc client_id': 'the identity provider’s client id, a setting',
  '/api/admin/auth/oidc/test client_id': 'as above',
  '/api/auth/desktop/complete machine_id': 'the desktop pairs with tenant 1 only (docs/tenants.md)',
  '/api/auth/desktop/login machine_id': 'as above',
  '/api/auth/desktop/keys/:id id': 'as above',
  '/api/i18n/languages/:id id': 'language packs are the installation’s',
};

/** Routes not swept, and why (they are covered elsewhere or would end the sweep). */
const NOT_SWEPT: Record<string, string> = {
  'POST /api/auth/logout': 'ends the sweeping session (tenants-select covers sessions per tenant)',
  'PATCH /api/auth/me': 'changes the sweeping person (own account only, no id)',
  'GET /api/events/stream': 'a stream that stays open: the realtime test below',
  'ALL /p/*rest': 'WebDAV gateway: its own test',
  'ALL /api/p/*rest': 'WebDAV gateway: its own test',
  'POST /api/admin/update/apply': 'a platform route (supertenant_only for both tenants): platform-routes.test.ts',
};

type Json = Record<string, unknown>;
interface Op {
  method: string;
  route: string;
  /** OpenAPI operation (parameters and request body), when the document has the route. */
  doc?: { parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Json }>; requestBody?: { content?: Record<string, { schema?: Json }> } };
}

describe('tenants: isolation over every route', () => {
  let s: TestServer;
  let roots: Array<{ dir: string; cleanup: () => void }> = [];
  let alpha: ReturnType<typeof onHost>;
  let beta: ReturnType<typeof onHost>;
  let aToken: string;
  let bToken: string;
  let alphaRoot: string;
  let alphaNames: Set<string>;
  let fakeLlm: FakeLlm | undefined;
  /** Beta's things, by kind. */
  const b: Record<string, string | number> = {};

  const ok = (r: HostAnswer, what: string) => {
    assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  /** A tenant with its admin `sam`, a storage `Docs` holding `shared.txt` (and what `files` adds), signed in on its host. */
  async function tenant(slug: string, host: string, files: Record<string, string>) {
    const id = await addTenantRow(s, slug, [host]);
    await s.server.services.auth.users.create({ tenant_id: id }, { ...SAME, role: 'admin' });
    const on = onHost(s, host);
    const token = ok(await on('POST', '/api/auth/login', { body: SAME }), `${slug} sign-in`).token as string;
    const root = tempDir(`filedock-iso-${slug}-`);
    roots.push(root);
    for (const [name, text] of Object.entries({ 'shared.txt': `${slug} text`, ...files })) {
      mkdirSync(join(root.dir, name, '..'), { recursive: true });
      writeFileSync(join(root.dir, name), text);
    }
    const st = ok(
      await on('POST', '/api/admin/storages', { token, body: { name: 'Docs', driver: 'local', rbac_enabled: false, config: { path: root.dir } } }),
      `${slug} storage`,
    );
    return { id, on, token, storage: st.id as number, root: root.dir };
  }

  /**
   * Beta's assistant conversation with one applied step (a model over the real OpenAI wire asks for a folder),
   * and its vault with an encrypted folder: the platform operator turns the assistant on for the installation.
   */
  async function betaAssistantAndVault() {
    fakeLlm = await startFakeOpenAI({ models: ['fake-1'] });
    const operator = await s.login();
    const on = await s.api('PATCH', '/api/admin/assistant', {
      token: operator,
      body: { enabled: true, provider: 'openai', address: fakeLlm.url, api_key: 'test-key', model: 'fake-1' },
    });
    ok({ status: on.status, body: on.body }, 'the assistant on');
    fakeLlm.play({ tool_calls: [{ name: 'mkdir', input: { path: `/Docs/b-assist-${R}` } }] }, { text: ['Made it.'] });
    // fetch cannot set Host: the prefix selects beta.
    const chat = await postSse(`${s.url}/t/beta/api/files/assistant/chat`, bToken, { message: `Beta chat ${B_SECRET}` });
    const [step] = ofType(chat.events, 'step');
    assert.ok(step?.step_id && step.status === 'done', `beta's step: ${JSON.stringify(chat)}`);
    b.conversation = ofType(chat.events, 'conversation')[0].id as string;
    b.step = step.step_id as string;
    const v = vaultBody();
    b.vaultKey = v.body.public_key;
    ok(await beta('PUT', '/api/vault', { token: bToken, body: v.body }), 'beta vault');
    b.folder = ok(await beta('POST', '/api/vault/folders', { token: bToken, body: { path: `/Docs/b-vault-${R}` } }), 'beta encrypted folder').folder
      .id as number;
    const me = ok(await beta('GET', '/api/auth/me', { token: bToken }), 'beta me').user.id as number;
    ok(
      await beta('PUT', `/api/vault/folders/${b.folder}/members`, {
        token: bToken,
        body: { key_version: 1, members: [{ user_id: me, wrapped_key: b64u(125) }] },
      }),
      'beta folder key',
    );
  }

  /**
   * Apps (docs/tenants.md, "Step 1: apps"): the operator trusts a publisher (the installation's list), and beta's
   * admin installs an app of its own through beta's prefix (a package is a raw body, which onHost does not send)
   * and gives it settings. Answers the app's id.
   */
  async function appsOfBeta(token: string): Promise<string> {
    const key = publisherKey('beta-publisher');
    const operator = await s.login();
    ok(await s.api('POST', '/api/admin/app-plugins/keys', { token: operator, body: key.trusted }), 'the operator trusts the publisher');
    const pkg = await buildAppPackage({ key, manifest: sampleManifest({ id: BETA_APP, publisher: key.publisher, permissions: ['storage'] }) });
    const r = await s.api('POST', '/t/beta/api/admin/app-plugins/apps', { token, raw: new Uint8Array(pkg), headers: { 'content-type': 'application/zip' } });
    assert.equal(r.status, 201, `beta installs an app: ${JSON.stringify(r.body)}`);
    ok(await beta('PATCH', `/api/admin/app-plugins/apps/${BETA_APP}`, { token, body: { settings: { note: BETA_APP_SETTING } } }), 'beta app settings');
    return BETA_APP;
  }

  /**
   * Beta's replication things: a target its storage is linked to, a rule, and an unresolved failure of its
   * only file (as the engine records one), so the replica routes' ids, `replica_target_id` and fix-one's path are real.
   */
  async function replicationThings() {
    const dir = tempDir(`filedock-iso-beta-target-`);
    roots.push(dir);
    b.replicaTarget = ok(
      await beta('POST', '/api/admin/replication-targets', { token: bToken, body: { name: BETA_TARGET, driver: 'local', config: { path: dir.dir } } }),
      'beta replication target',
    ).id as number;
    ok(await beta('PATCH', `/api/admin/storages/${b.storage}`, { token: bToken, body: { replica_target_id: b.replicaTarget } }), 'beta storage linked');
    b.replicaRule = ok(await beta('POST', '/api/admin/replica/rules', { token: bToken, body: { path_pattern: 'Docs/skip/**', mode: 'skip' } }), 'beta rule')
      .id as number;
    await new ReplicationRepo(s.server.services.db).recordFailure(
      { tenant_id: Number(b.tenant) },
      { storage_id: Number(b.storage), rel: B_ONLY_FILE, op: 'write', to_rel: null, from_rel: null, code: 'REPLICA_WRITE_FAIL', message: B_SECRET },
    );
    const failures = ok(await beta('GET', '/api/admin/replica/failures', { token: bToken }), 'beta failures').failures as Json[];
    assert.deepEqual(
      failures.map((f) => f.path),
      [`/Docs/${B_ONLY_FILE}`],
    );
  }

  before(async () => {
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
    const a = await tenant('alpha', ALPHA, {});
    const t = await tenant('beta', BETA, { [B_ONLY_FILE]: B_SECRET, 'b-folder/inner.txt': B_SECRET });
    alpha = a.on;
    beta = t.on;
    aToken = a.token;
    alphaRoot = a.root;
    alphaNames = new Set(readdirSync(a.root));
    bToken = t.token;
    b.storage = t.storage;
    b.root = t.root;
    const sync = ok(await beta('POST', `/api/admin/storages/${t.storage}/sync`, { token: bToken }), 'beta sync');
    b.run = sync.run_id;
    // Up to a minute: a loaded CI machine runs two other suites beside this one.
    for (let i = 0, run = { status: '' }; run.status !== 'completed'; i++) {
      assert.ok(i < 1200, `beta's first sync finished: ${JSON.stringify(run)}`);
      run = ok(await beta('GET', `/api/admin/sync/runs/${b.run}`, { token: bToken }), 'beta run') as typeof run;
      if (run.status !== 'completed') await new Promise((r) => setTimeout(r, 50));
    }
    const listing = ok(await beta('GET', '/api/files/manager?path=/Docs', { token: bToken }), 'beta listing');
    const only = (listing.entries as Json[]).find((e) => e.name === B_ONLY_FILE);
    assert.ok(only, `beta lists ${B_ONLY_FILE}: ${JSON.stringify(listing)}`);
    b.node = only.id as number;
    b.user = ok(await beta('POST', '/api/admin/users', { token: bToken, body: { email: B_PERSON, password: 'beta-person-1', role: 'user' } }), 'beta person')
      .user.id as number;
    const share = ok(await beta('POST', '/api/files/share', { token: bToken, body: { path: `/Docs/${B_ONLY_FILE}` } }), 'beta link');
    b.share = share.id as number;
    b.token = share.token as string;
    b.role = ok(await beta('POST', '/api/admin/roles', { token: bToken, body: { name: `Beta role ${R}`, permissions: {} } }), 'beta role').role.id as number;
    b.key = ok(await beta('POST', '/api/auth/keys', { token: bToken, body: { name: `beta-key-${R}`, verbs: ['files:read'] } }), 'beta key').key.id as number;
    b.webhook = ok(await beta('POST', '/api/admin/webhooks', { token: bToken, body: { url: BETA_HOOK, events: ['file.uploaded'] } }), 'beta webhook')
      .id as number;
    b.sshKey = ok(await beta('POST', '/api/auth/ssh-keys', { token: bToken, body: { name: `beta-ssh-${R}`, public_key: sshKeyLine() } }), 'beta SSH key').key
      .id as number;
    b.upload = ok(await beta('POST', '/api/files/upload/init', { token: bToken, body: { path: `/Docs/upload-${R}.bin`, size: 10 } }), 'beta upload')
      .upload_id as string;
    b.export = ok(
      await beta('POST', '/api/admin/gateways/nfs/exports', { token: bToken, body: { path: '/Docs', clients: '127.0.0.0/8', user_id: b.user } }),
      'beta NFS export',
    ).export.id as number;
    b.tenant = t.id;
    b.app = await appsOfBeta(bToken);
    await replicationThings();
    const sessions = ok(await beta('GET', '/api/auth/sessions', { token: bToken }), 'beta sessions');
    b.session = ((sessions.sessions ?? sessions) as Json[])[0].id as number;
    await betaAssistantAndVault();
  });
  after(async () => {
    await s?.close();
    await fakeLlm?.close();
    for (const r of roots) r.cleanup();
    roots = [];
  });

  /** Every route of the routers' table with its OpenAPI operation. */
  async function operations(): Promise<Op[]> {
    const doc = ok(await alpha('GET', '/api/openapi.json', { token: aToken }), 'openapi').paths as Record<string, Record<string, Op['doc']>>;
    const ops: Op[] = [];
    for (const router of s.server.routers)
      for (const layer of router.stack as Array<{ methods: string[]; path: string }>) {
        const methods = layer.methods.filter((m) => m !== 'HEAD');
        if (methods.length === 0) continue;
        if (methods.length > 4) {
          ops.push({ method: 'ALL', route: layer.path });
          continue;
        }
        const docPath = layer.path.replace(/:(\w+)/g, '{$1}');
        for (const method of methods) ops.push({ method, route: layer.path, doc: doc[docPath]?.[method.toLowerCase()] });
      }
    return ops;
  }

  /** Beta's thing for a route parameter or an id field, or undefined when there is none. */
  function betaThing(route: string, name: string): string | number | undefined {
    if (name === 'token') return b.token;
    if (name === 'sid') return b.session;
    if (/^(storage_id|storageId)$/.test(name)) return b.storage;
    if (/^(user_id|userId)$/.test(name)) return b.user;
    if (/^(role_id|roleId|custom_role_id)$/.test(name)) return b.role;
    if (name === 'target_id' && route.startsWith('/api/admin/webhooks')) return b.webhook;
    if (/^(node_id|file_id|nodeId)$/.test(name)) return b.node;
    if (/^(run_id|runId)$/.test(name)) return b.run;
    if (name === 'upload_id') return b.upload;
    if (name === 'key_id') return b.key;
    if (name === 'conversation_id') return b.conversation;
    if (name === 'step_id') return b.step;
    if (name === 'plugin') return b.app;
    if (name === 'replica_target_id') return b.replicaTarget;
    if (name !== 'id') return undefined;
    const kinds: Array<[RegExp, string]> = [
      [/^\/api\/admin\/users\//, 'user'],
      [/^\/api\/admin\/storages\//, 'storage'],
      [/^\/api\/admin\/roles\//, 'role'],
      [/^\/api\/admin\/webhooks\//, 'webhook'],
      [/^\/api\/admin\/sync\/runs\//, 'run'],
      [/^\/api\/auth\/keys\//, 'key'],
      [/^\/api\/auth\/sessions\//, 'session'],
      [/^\/api\/auth\/ssh-keys\//, 'sshKey'],
      [/^\/api\/admin\/gateways\/nfs\/exports\//, 'export'],
      [/^\/api\/admin\/replication-targets\//, 'replicaTarget'],
      [/^\/api\/admin\/replica\/rules\//, 'replicaRule'],
      [/^\/api\/platform\/tenants\//, 'tenant'],
      [/^\/api\/files\/share\//, 'share'],
      [/^\/api\/files\/permissions\/share-mail/, 'share'],
      [/^\/api\/files\/thumb\//, 'node'],
      [/^\/api\/files\/assistant\/conversations\//, 'conversation'],
      [/^\/api\/vault\/folders\//, 'folder'],
      [/^\/api\/admin\/app-plugins\/apps\//, 'app'],
    ];
    const kind = kinds.find(([re]) => re.test(route))?.[1];
    return kind ? b[kind] : undefined;
  }

  const PATHISH = /^(path|paths|from|to|dir|folder|source|src|target|dest|destination|parent|file|files|items)$/;

  /** A value for `schema` named `name`: beta's thing (side 'beta') or a missing one. */
  function fill(route: string, name: string, schema: Json | undefined, side: 'beta' | 'missing', unfilled: Set<string>): unknown {
    const sc = schema ?? {};
    if (Array.isArray(sc.enum)) return sc.enum[0];
    if (sc.type === 'boolean') return false;
    if (sc.type === 'array') {
      const one = fill(route, name, sc.items as Json, side, unfilled);
      return Array(Math.max(1, Number(sc.minItems ?? 1))).fill(one);
    }
    if (sc.type === 'object') {
      const out: Json = {};
      const props = (sc.properties ?? {}) as Record<string, Json>;
      for (const key of (sc.required ?? []) as string[]) out[key] = fill(route, key, props[key], side, unfilled);
      // Identifiers are filled even when optional: they are what this suite is about.
      for (const [key, p] of Object.entries(props))
        if (!(key in out) && (PATHISH.test(key) || /(^id$|_id$|^token$)/.test(key))) out[key] = fill(route, key, p, side, unfilled);
      return out;
    }
    if (PATHISH.test(name)) return side === 'beta' ? `/Docs/${B_ONLY_FILE}` : `/Docs/missing-${R}.txt`;
    if (/(^id$|_id$|Id$|^token$|^sid$|^plugin$)/.test(name)) {
      const thing = betaThing(route, name);
      if (thing === undefined) unfilled.add(`${route} ${name}`);
      const v = side === 'beta' && thing !== undefined ? thing : name === 'token' ? `missing${R}missing${R}` : MISSING_ID;
      return sc.type === 'string' ? String(v) : v;
    }
    if (sc.type === 'integer' || sc.type === 'number') return Math.max(Number(sc.minimum ?? 1), 1);
    if (sc.format === 'email') return `x-${R}@example.test`;
    if (sc.format === 'uri' || name === 'url') return 'http://127.0.0.1:9/';
    return 'x'.repeat(Math.max(1, Number(sc.minLength ?? 1)));
  }

  /** The request of `op` for one side: its URL and JSON body. */
  function requestOf(op: Op, side: 'beta' | 'missing', unfilled: Set<string>): { url: string; body?: unknown } {
    const url = op.route.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(String(fill(op.route, name, { type: 'string' }, side, unfilled))));
    const query = new URLSearchParams();
    for (const p of op.doc?.parameters ?? [])
      if (p.in === 'query' && (p.required || PATHISH.test(p.name) || /(^id$|_id$)/.test(p.name))) {
        const v = fill(op.route, p.name, p.schema, side, unfilled);
        query.set(p.name, String(v));
      }
    const schema = op.doc?.requestBody?.content?.['application/json']?.schema;
    const body = schema ? fill(op.route, '', schema, side, unfilled) : op.method === 'GET' || op.method === 'DELETE' ? undefined : {};
    return { url: query.size ? `${url}?${query}` : url, body };
  }

  /** What only beta has: its file's name and text, its person, link token, names of its role and keys, its hook and root. */
  const markers = () => [
    B_ONLY_FILE,
    B_SECRET,
    B_PERSON,
    String(b.token),
    `Beta role ${R}`,
    `beta-key-${R}`,
    `beta-ssh-${R}`,
    BETA_HOOK,
    String(b.root),
    String(b.vaultKey),
    `b-vault-${R}`,
    `b-assist-${R}`,
    BETA_APP_SETTING,
    BETA_APP,
    BETA_TARGET,
  ];

  /** Beta markers in an answer that the request did not carry itself (an echoed path or token tells nothing). */
  const leaks = (r: HostAnswer, sent: { url: string; body?: unknown }): string[] => {
    const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
    const asked = decodeURIComponent(sent.url) + JSON.stringify(sent.body ?? null);
    return markers().filter((m) => text.includes(m) && !asked.includes(m));
  };

  /**
   * Alpha's storage as it was: a route that made something there with a beta name (a folder, a text, an
   * upload) must not turn the next route's beta path into one of alpha's own.
   */
  async function restoreAlpha(): Promise<void> {
    const extra = readdirSync(alphaRoot).filter((n) => !alphaNames.has(n));
    if (extra.length === 0) return;
    for (const n of extra) rmSync(join(alphaRoot, n), { recursive: true, force: true });
    ok(await alpha('POST', '/api/files/refresh', { token: aToken, body: { path: '/Docs' } }), 'alpha refresh');
  }

  /** What beta's admin sees of beta's things: must not change while alpha sweeps. */
  async function betaState(): Promise<string> {
    const parts = [];
    for (const path of [
      '/api/admin/users',
      '/api/admin/storages',
      '/api/admin/roles',
      '/api/admin/webhooks',
      '/api/admin/app-plugins/apps',
      '/api/auth/keys',
      '/api/files/share',
      '/api/files/manager?path=/Docs',
      '/api/files/assistant/conversations',
      `/api/files/assistant/conversations/${b.conversation}`,
      '/api/vault/folders',
      '/api/admin/replication-targets',
      '/api/admin/replica/rules',
      '/api/admin/replica/failures',
    ]) {
      const r = await beta('GET', path, { token: bToken });
      // Not what a sync or the volume probe changes by itself in the background: the last sync time, the volume seen.
      parts.push(`${path} ${r.status} ${JSON.stringify(r.body, (k, v) => (/(_at|seen|used|count|uptime|last_sync|volume)$/.test(k) ? undefined : v))}`);
    }
    const raw = await beta('GET', `/api/files/raw?path=${encodeURIComponent(`/Docs/${B_ONLY_FILE}`)}`, { token: bToken });
    parts.push(`raw ${raw.status} ${raw.body}`);
    return parts.join('\n');
  }

  test('the comparison can fail: alpha’s own person is told from a missing one', async () => {
    const mine = ok(await alpha('GET', '/api/auth/me', { token: aToken }), 'alpha me').user.id as number;
    assert.equal((await alpha('GET', `/api/admin/users/${mine}`, { token: aToken })).status, 200);
    const missing = await alpha('GET', `/api/admin/users/${MISSING_ID}`, { token: aToken });
    assert.deepEqual([missing.status, missing.body.error], [404, 'not_found']);
  });

  /** Every route called as `token` (a person of alpha) with beta's identifiers and with missing ones: the answers must agree. */
  async function sweep(token: string) {
    const before = await betaState();
    assert.match(before, new RegExp(B_SECRET), 'beta reads its own file');
    const ops = await operations();
    assert.ok(ops.length > 250, `the routers' table: ${ops.length} routes`);
    const unfilled = new Set<string>();
    const differ: string[] = [];
    let compared = 0;
    const leaked: string[] = [];
    for (const op of ops) {
      const name = `${op.method} ${op.route}`;
      if (name in NOT_SWEPT) continue;
      const withBeta = requestOf(op, 'beta', unfilled);
      const missing = requestOf(op, 'missing', unfilled);
      const rb = await alpha(op.method, withBeta.url, { token, body: withBeta.body });
      const found = leaks(rb, withBeta);
      if (found.length) leaked.push(`${name}: ${found.join(', ')} in ${rb.status} ${JSON.stringify(rb.body).slice(0, 300)}`);
      await restoreAlpha();
      if (JSON.stringify(withBeta) === JSON.stringify(missing)) continue;
      compared++;
      const rm = await alpha(op.method, missing.url, { token, body: missing.body });
      await restoreAlpha();
      const code = (r: HostAnswer) => `${r.status} ${(r.body as Json | null)?.error ?? ''}`;
      if (code(rb) !== code(rm)) differ.push(`${name}: beta's ${code(rb)} against missing ${code(rm)} (${withBeta.url})`);
    }
    assert.deepEqual(
      {
        'answers to alpha carrying beta markers': leaked,
        'routes that tell beta’s things from missing ones': differ,
        'parameters and id fields with no beta thing (make one, or list it in NO_BETA_THING)': [...unfilled].filter((u) => !(u in NO_BETA_THING)).sort(),
      },
      {
        'answers to alpha carrying beta markers': [],
        'routes that tell beta’s things from missing ones': [],
        'parameters and id fields with no beta thing (make one, or list it in NO_BETA_THING)': [],
      },
    );
    assert.ok(compared > 100, `routes called with beta's identifiers and with missing ones: ${compared}`);
    assert.equal(await betaState(), before, 'beta’s things after alpha’s sweep');
  }

  test('alpha’s admin meets beta’s things as missing ones on every route, and beta’s things stay as they were', () => sweep(aToken));

  test('so does a plain person of alpha (refusals of its role included)', async () => {
    const person = { email: `plain-${R}@alpha.test`, password: 'plain-password-1' };
    ok(await alpha('POST', '/api/admin/users', { token: aToken, body: { ...person, role: 'user' } }), 'alpha person');
    const token = ok(await alpha('POST', '/api/auth/login', { body: person }), 'alpha person signs in').token as string;
    await sweep(token);
  });

  test('realtime: alpha’s streams carry alpha’s changes and none of beta’s', async () => {
    const port = new URL(s.url).port;
    const open = (query: string) => {
      const ac = new AbortController();
      const text = { all: '' };
      const done = (async () => {
        // fetch cannot set Host: the prefix selects alpha instead.
        const res = await fetch(`http://127.0.0.1:${port}/t/alpha/api/events/stream${query}`, {
          headers: { authorization: `Bearer ${aToken}` },
          signal: ac.signal,
        });
        assert.equal(res.status, 200);
        const decoder = new TextDecoder();
        const reader = res.body!.getReader();
        try {
          for (let r = await reader.read(); !r.done; r = await reader.read()) text.all += decoder.decode(r.value, { stream: true });
        } catch {
          /* aborted below */
        }
      })();
      return { text, stop: async () => (ac.abort(), await done) };
    };
    const streams = [open(''), open('?folder=/Docs')];
    try {
      await new Promise((r) => setTimeout(r, 300));
      const bName = `b-new-${R}.txt`;
      ok(await beta('POST', '/api/files/save-text', { token: bToken, body: { path: `/Docs/${bName}`, content: B_SECRET } }), 'beta writes');
      ok(await alpha('POST', '/api/files/save-text', { token: aToken, body: { path: `/Docs/a-new-${R}.txt`, content: 'alpha' } }), 'alpha writes');
      for (let i = 0; i < 600 && !streams[1].text.all.includes(`a-new-${R}`); i++) await new Promise((r) => setTimeout(r, 25));
      assert.match(streams[1].text.all, new RegExp(`a-new-${R}`), 'alpha’s own change reached its open folder');
      await new Promise((r) => setTimeout(r, 300));
      // Not B_ONLY_FILE: the sweep above made and removed alpha's own folder of that name (the hub replays a folder's last change).
      const theirs = [bName, B_SECRET, ...markers().filter((m) => m !== B_ONLY_FILE)];
      for (const st of streams) for (const m of theirs) assert.ok(!st.text.all.includes(m), `beta's ${m} in alpha's stream: ${st.text.all}`);
    } finally {
      for (const st of streams) await st.stop();
      rmSync(join(alphaRoot, `a-new-${R}.txt`), { force: true });
    }
  });
});
