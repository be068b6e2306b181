// Renders docs/api-reference.md from the OpenAPI document of a freshly started server (what it serves at /api/openapi.json)
// (`npm run docs:api`). test/http/openapi.test.ts fails when the committed page differs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Schema = Record<string, any>;
interface Operation {
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  parameters: Array<{ name: string; in: string; required: boolean; schema: Schema }>;
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, { description: string; content?: Record<string, unknown> }>;
  'x-auth': string;
  'x-api-key'?: string;
}

export const PAGE = 'docs/api-reference.md';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (s: string) => `\`${s}\``;
const BIG = Number.MAX_SAFE_INTEGER;

/** A schema in a few words: `string ≤ 8192`, `integer 1..1000`, `link \| drop`, `array of string`. */
function typeOf(s: Schema | undefined): string {
  if (!s || Object.keys(s).length === 0) return 'any';
  if (s.enum) return s.enum.map((v: unknown) => code(String(v))).join(' or ');
  if (s.const !== undefined) return code(JSON.stringify(s.const));
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return alts.map(typeOf).join(' or ');
  if (s.type === 'array') return `array of ${typeOf(s.items)}${s.maxItems !== undefined ? ` (≤ ${s.maxItems})` : ''}`;
  const t = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any');
  const min = s.minimum ?? s.minLength;
  // zod's int() carries MAX_SAFE_INTEGER as its maximum: no limit worth printing.
  const max = s.maximum ?? s.maxLength;
  const capped = max !== undefined && max !== BIG;
  const range =
    min !== undefined && capped
      ? ` ${min}..${max}`
      : capped
        ? ` ≤ ${max}`
        : min !== undefined
          ? ` ≥ ${min}`
          : s.exclusiveMinimum !== undefined
            ? ` > ${s.exclusiveMinimum}`
            : '';
  return `${t}${range}${s.format ? ` (${s.format})` : ''}`;
}

const notes = (s: Schema | undefined) =>
  [s?.default !== undefined && `default ${code(JSON.stringify(s.default))}`, s?.pattern && `pattern ${code(s.pattern)}`, s?.description]
    .filter(Boolean)
    .join('; ');

function fieldTable(s: Schema): string[] {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const req = new Set<string>(s.required ?? []);
  const rows = Object.entries(props).map(([k, v]) => `| ${code(k)} | ${cell(typeOf(v))} | ${req.has(k) ? 'yes' : ''} | ${cell(notes(v))} |`);
  return rows.length ? ['| Field | Type | Required | Notes |', '|---|---|---|---|', ...rows] : [];
}

function bodyLines(op: Operation): string[] {
  if (!op.requestBody) return [];
  const [type, media] = Object.entries(op.requestBody.content)[0];
  const s = media.schema;
  const out = [`Body (${code(type)})${s ? ':' : ': raw bytes or form data, see the summary.'}`, ''];
  if (!s) return out;
  const variants = (s.anyOf ?? s.oneOf ?? [s]) as Schema[];
  variants.forEach((v, i) => {
    if (variants.length > 1) out.push(`One of (${i + 1}):`, '');
    const table = fieldTable(v);
    out.push(...(table.length ? table : [`${cell(typeOf(v))}${v.additionalProperties === false ? '' : ' (any fields)'}`]), '');
  });
  return out;
}

const AUTH: Record<string, string> = {
  public: 'none',
  user: 'signed in (session cookie or bearer token)',
  admin: 'an admin (session cookie or bearer token)',
  signed: 'a signature or token the server issued (see the summary)',
};

function operationLines(method: string, path: string, op: Operation): string[] {
  const [status, res] = Object.entries(op.responses).find(([k]) => /^\d/.test(k))!;
  const types = Object.keys(res.content ?? {});
  const key = op['x-api-key'] === undefined ? '' : op['x-api-key'] === 'session' ? '; API keys refused' : `; an API key needs ${code(op['x-api-key'])}`;
  const out = [
    `### ${code(`${method.toUpperCase()} ${path}`)}`,
    '',
    `${op.summary}${op.deprecated ? ' (deprecated)' : ''}`,
    '',
    ...(op.description ? [op.description, ''] : []),
    `- Auth: ${AUTH[op['x-auth']]}${key}`,
    `- Success: ${status}${types.length ? ` ${types.map(code).join(', ')}` : ''}; errors in the envelope`,
    '',
  ];
  if (op.parameters.length) {
    out.push('| Parameter | In | Type | Required | Notes |', '|---|---|---|---|---|');
    for (const p of op.parameters)
      out.push(`| ${code(p.name)} | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : ''} | ${cell(notes(p.schema))} |`);
    out.push('');
  }
  return [...out, ...bodyLines(op)];
}

const anchor = (tag: string) =>
  tag
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

/** The page, grouped by tag (in the document's order), routes by path then method. Holds no version, so a release does not stale it. */
export function renderReference(doc: { paths: Record<string, Record<string, Operation>>; tags: Array<{ name: string }> }): string {
  const byTag = new Map<string, string[]>(doc.tags.map((t) => [t.name, []]));
  let count = 0;
  for (const path of Object.keys(doc.paths).sort()) {
    for (const [method, op] of Object.entries(doc.paths[path]).sort(([a], [b]) => a.localeCompare(b))) {
      byTag.get(op.tags[0])!.push(...operationLines(method, path, op));
      count++;
    }
  }
  const head = [
    '# API reference',
    '',
    `<!-- Generated by \`npm run docs:api\` from GET /api/openapi.json; do not edit (test/http/openapi.test.ts fails when it is stale). -->`,
    '',
    `Every route of the server (${count} operations), from the OpenAPI 3.1 document it serves at \`GET /api/openapi.json\` (no sign-in; it holds no secrets). The types and limits are the schemas each route validates its input with. A refusal is always the error envelope \`{error, message, details?, params?}\` with a 4xx or 5xx status (see the spec's Errors). "An API key needs" names the verb a key must hold on that route (docs/auth.md).`,
    '',
    ...doc.tags.map((t) => `- [${t.name}](#${anchor(t.name)}) (${byTag.get(t.name)!.filter((l) => l.startsWith('### ')).length})`),
    '',
  ];
  return [...head, ...[...byTag].flatMap(([tag, lines]) => [`## ${tag}`, '', ...lines])].join('\n').replace(/\n+$/, '\n');
}

async function main() {
  const { loadConfig } = await import('../server/config');
  const { startServer } = await import('../server/main');
  const { createLogger } = await import('../server/lib/log');
  const { buildOpenApi } = await import('../server/http/openapi/document');
  const { VERSION } = await import('../server/version');
  const dir = mkdtempSync(join(tmpdir(), 'filedock-apiref-'));
  const server = await startServer(
    loadConfig({ SERVICE_DATA_DIR: dir, SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_UPDATE_CHECK: '0', SERVICE_MULTI_TENANT: '1' }),
    {
      logger: createLogger('error'),
    },
  );
  try {
    // Multi-tenant mode: every route the server can have, the platform operator's tenant routes too (docs/tenants.md).
    // The document GET /api/openapi.json serves, built from the running server's routers (no HTTP round trip to wait out at close).
    const doc = JSON.parse(JSON.stringify(buildOpenApi(server.routers, VERSION)));
    writeFileSync(fileURLToPath(new URL(`../${PAGE}`, import.meta.url)), renderReference(doc));
    console.log(`wrote ${PAGE}`);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
