/**
 * The static half of "checked twice" (docs/tenants.md, principle 4): every statement in a repository
 * (`*.repo.ts`) over a scoped table (server/db/tenant-tables.ts `SCOPED`, the list the run-time guard
 * reads) names its tenant. A Kysely statement (`selectFrom`, `updateTable`, `deleteFrom` of a scoped table)
 * carries a `where('tenant_id'…)` (or `'<alias>.tenant_id'`) in its chain; an `insertInto` sets `tenant_id`
 * in its values; SQL text reading FROM, updating or inserting INTO a scoped table holds `tenant_id`. Like
 * the guard, joined tables are reached through the row they join. A statement whose chain is built in
 * steps names its tenant in its first step.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { SCOPED } from '../../server/db/tenant-tables';

const root = new URL('../../server', import.meta.url).pathname;
const BUILDERS = new Set(['selectFrom', 'updateTable', 'deleteFrom', 'insertInto']);
/** The SQL comment of a statement that works over every tenant's rows on purpose (the queue's pump, sweeps). */
const EVERY_TENANT = '/* every tenant */';
const SQL_TABLE = /\b(?:FROM|UPDATE|INTO)\s+"?([a-z_]+)"?/gi;

function repositories(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return repositories(p);
    return d.name.endsWith('.repo.ts') ? [p] : [];
  });
}

/** The whole method chain a builder call starts (`k.selectFrom(…).select(…).where(…)`). */
function chainOf(call: ts.Node): ts.Node {
  let n = call;
  while ((ts.isPropertyAccessExpression(n.parent) && n.parent.expression === n) || (ts.isCallExpression(n.parent) && n.parent.expression === n)) n = n.parent;
  return n;
}

/** Statements over scoped tables that do not name their tenant: `line: text`; and how many were looked at. */
function unscoped(file: string, text: string, scoped: ReadonlySet<string> = new Set(SCOPED)): { missing: string[]; seen: number } {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const missing: string[] = [];
  let seen = 0;
  const report = (n: ts.Node, what: string) => {
    const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
    missing.push(`${file}:${line} ${what}`);
  };
  const visit = (n: ts.Node) => {
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && BUILDERS.has(n.expression.name.text)) {
      const arg = n.arguments[0];
      const table = arg && ts.isStringLiteralLike(arg) ? arg.text.split(/\s+/)[0] : undefined;
      if (table && scoped.has(table)) {
        seen++;
        const chain = chainOf(n).getText(sf);
        const ok = n.expression.name.text === 'insertInto' ? /\btenant_id\b/.test(chain) : /\.where\(\s*'(?:\w+\.)?tenant_id'/.test(chain);
        if (!ok) report(n, `${n.expression.name.text}('${table}') without tenant_id`);
      }
    } else if (ts.isStringLiteralLike(n) || ts.isTemplateExpression(n)) {
      const sql = n.getText(sf);
      for (const m of sql.matchAll(SQL_TABLE)) {
        if (!scoped.has(m[1])) continue;
        seen++;
        // A comment does not scope a statement; `/* every tenant */` is the one that says it spans tenants on purpose.
        const code = sql.replace(/\/\*[\s\S]*?\*\//g, (c) => (c === EVERY_TENANT ? c : ' '));
        if (!/\btenant_id\b/.test(code) && !code.includes(EVERY_TENANT)) report(n, `SQL over ${m[1]} without tenant_id`);
      }
      return;
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return { missing, seen };
}

test('every repository statement over a scoped table names its tenant', () => {
  const missing: string[] = [];
  let seen = 0;
  for (const f of repositories(root)) {
    const r = unscoped(relative(root, f), readFileSync(f, 'utf8'));
    missing.push(...r.missing);
    seen += r.seen;
  }
  assert.ok(seen > 10, `the scan finds the statements over scoped tables (${seen})`);
  assert.deepEqual(missing, [], 'pass the TenantScope and filter by tenant_id (docs/tenants.md)');
});

test('the scan tells a scoped statement from one that is not', () => {
  const src = `
    const a = k.selectFrom('users').selectAll().where('id', '=', id);
    const b = k.selectFrom('users as u').select('u.id').where('u.tenant_id', '=', s.tenant_id).where('u.id', '=', id);
    const c = k.insertInto('sessions').values(row);
    const d = k.insertInto('sessions').values({ ...row, tenant_id: s.tenant_id });
    const e = k.deleteFrom('api_keys').where('user_id', '=', 1);
    const f = 'SELECT g.name FROM groups g ORDER BY g.name';
    const g = \`SELECT * FROM users WHERE tenant_id = ? \${more}\`;
    const h = k.selectFrom('storages').selectAll();
    const i = 'SELECT id FROM users /* tenant_id */ WHERE id = ?';
    const j = 'SELECT count(*) FROM users /* every tenant */ WHERE disabled = 0';`;
  const r = unscoped('sample.repo.ts', src, new Set(['users', 'sessions', 'api_keys', 'groups']));
  assert.equal(r.seen, 9);
  assert.deepEqual(
    r.missing.map((m) => m.replace(/^sample\.repo\.ts:\d+ /, '')),
    [
      "selectFrom('users') without tenant_id",
      "insertInto('sessions') without tenant_id",
      "deleteFrom('api_keys') without tenant_id",
      'SQL over groups without tenant_id',
      'SQL over users without tenant_id',
    ],
  );
});
