/**
 * GET /api/openapi.json: a valid OpenAPI 3.1 document (checked by a validator package)
 * that describes every route the routers answer and no route they do not. A route
 * added without a `doc({...})` fails here, named. The rendered reference page
 * (docs/api-reference.md) must be the one this document renders.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestServer, type TestServer } from '../helpers/server';
import { routeEntries } from '../../server/http/openapi/document';
import { VERSION } from '../../server/version';
import { PAGE, renderReference } from '../../scripts/api-reference';

describe('the OpenAPI description', () => {
  let s: TestServer;
  let doc: any;
  before(async () => {
    // Multi-tenant mode mounts every route (the platform operator's too): the reference page lists them all.
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
    const res = await fetch(`${s.url}/api/openapi.json`);
    assert.equal(res.status, 200, 'served without signing in');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    doc = await res.json();
  });
  after(() => s.close());

  test('validates as OpenAPI 3.1, version the app’s', async () => {
    const v = new Validator();
    const r = await v.validate(structuredClone(doc));
    assert.equal(r.valid, true, `validator errors: ${JSON.stringify(r.errors, null, 1)?.slice(0, 3000)}`);
    assert.equal(v.version, '3.1');
    assert.doesNotThrow(() => v.resolveRefs(), 'every $ref resolves');
    assert.equal(doc.info.version, VERSION);
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((ops) =>
      Object.values(ops).map((o) => o.operationId),
    );
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  });

  test('every route of the routers is described, every described route exists', () => {
    const inRouter = new Set(routeEntries(s.server.routers).map((e) => `${e.method} ${e.path}`));
    const inDoc = new Set(Object.entries(doc.paths as Record<string, object>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)));
    const undescribed = [...inRouter].filter((k) => !inDoc.has(k));
    const phantom = [...inDoc].filter((k) => !inRouter.has(k));
    assert.deepEqual(undescribed, [], `routes without a description (add doc({ summary, ... }) to their definition):\n  ${undescribed.join('\n  ')}`);
    assert.deepEqual(phantom, [], `described routes the routers do not answer:\n  ${phantom.join('\n  ')}`);
    assert.equal(inDoc.size, inRouter.size, 'route count of the document equals the router’s');
    assert.ok(inRouter.size > 200, `the walk found the routers’ routes (${inRouter.size})`);
  });

  test('the schemas are the handlers’ own: a body field and its limit, the error envelope, auth', () => {
    const share = doc.paths['/api/files/share'].post;
    const body = share.requestBody.content['application/json'].schema;
    assert.equal(body.properties.path.maxLength, 8192);
    assert.deepEqual(share.security, [{ session: [] }, { bearer: [] }]);
    assert.equal(share.responses['4XX'].$ref, '#/components/responses/Error');
    assert.deepEqual(doc.components.schemas.Error.required, ['error', 'message']);
    const login = doc.paths['/api/auth/login'].post;
    assert.deepEqual(login.security, [], 'sign-in is public');
    const raw = doc.paths['/api/files/raw'].get;
    assert.ok(raw.parameters.some((p: any) => p.name === 'path' && p.in === 'query' && p.required));
    assert.ok(raw.responses['200'].content['application/octet-stream']);
  });

  test('docs/api-reference.md is the page this document renders', () => {
    const committed = readFileSync(new URL(`../../${PAGE}`, import.meta.url), 'utf8');
    assert.ok(committed === renderReference(doc), `${PAGE} is stale: run \`npm run docs:api\` and commit the page`);
  });
});
