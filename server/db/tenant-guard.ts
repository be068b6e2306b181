/**
 * The run-time half of "checked twice" (docs/tenants.md, principle 4): a Kysely plugin that walks each
 * query's operation tree when it is compiled and throws `internal` on a statement over a scoped table
 * (tenant-tables.ts `SCOPED`) that does not name its tenant: a select, update or delete whose WHERE does
 * not hold `tenant_id = …` (or `IN`) for that table among its top-level AND terms, an insert without a
 * `tenant_id` column. Every (sub)query is checked on its own. Joined tables are reached through the row they
 * join (children carry their parent's tenant), so the rule is on FROM and the update or delete target; SQL
 * text (`db.async.sql`) is the static scan's part. On in tests and in multi-tenant mode; off, not installed
 * and costing nothing, in single-tenant mode.
 */
import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { AppError } from '../errors';
import { SCOPED } from './tenant-tables';

/** Whether the guard runs: under tests (NODE_ENV=test) and in multi-tenant mode (SERVICE_MULTI_TENANT=1). */
const tenantGuardWanted = (env: NodeJS.ProcessEnv = process.env): boolean => env.NODE_ENV === 'test' || env.SERVICE_MULTI_TENANT === '1';

/**
 * The plugins a database's query builder runs at compile time: the guard when `on` (default:
 * `tenantGuardWanted()`), over `SCOPED` or the tables given (the guard's own tests).
 */
export const guardPlugins = (on: boolean | readonly string[] = tenantGuardWanted()): KyselyPlugin[] =>
  on === false ? [] : [new TenantGuard(on === true ? SCOPED : on)];

class TenantGuard implements KyselyPlugin {
  private scoped: ReadonlySet<string>;
  constructor(tables: readonly string[]) {
    this.scoped = new Set(tables);
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    visit(args.node as unknown as Node, this.scoped);
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

// The node shapes read here (Kysely's OperationNode types, kept loose: only these fields matter).
type Node = OperationNode & Record<string, unknown>;
interface Target {
  table: string;
  /** The name the statement refers to it by (its alias, else its name). */
  ref: string;
}

function visit(n: Node, scoped: ReadonlySet<string>): void {
  switch (n.kind) {
    case 'SelectQueryNode':
      for (const t of targets(froms(n.from), scoped)) need(n, t);
      break;
    case 'UpdateQueryNode':
      for (const t of targets([n.table as Node], scoped)) need(n, t);
      break;
    case 'DeleteQueryNode':
      for (const t of targets(froms(n.from), scoped)) need(n, t);
      break;
    case 'InsertQueryNode': {
      const [t] = targets([n.into as Node], scoped);
      if (t && !((n.columns as Node[] | undefined) ?? []).some((c) => name(c.column) === 'tenant_id')) refuse('insert into', t.table);
      break;
    }
  }
  for (const key in n) {
    const v = n[key];
    if (Array.isArray(v)) {
      for (const x of v) if (isNode(x) && !LEAVES.has(x.kind)) visit(x, scoped);
    } else if (isNode(v) && !LEAVES.has(v.kind)) visit(v, scoped);
  }
}

/** Nodes that hold no query: not walked into (most of a tree's nodes; the walk's cost). */
const LEAVES: ReadonlySet<string> = new Set([
  'IdentifierNode',
  'SchemableIdentifierNode',
  'TableNode',
  'ColumnNode',
  'ReferenceNode',
  'OperatorNode',
  'ValueNode',
  'PrimitiveValueListNode',
  'SelectAllNode',
]);

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && typeof (v as { kind?: unknown }).kind === 'string';
const froms = (from: unknown): Node[] => ((from as { froms?: Node[] } | undefined)?.froms ?? []) as Node[];
const name = (id: unknown): string | undefined => (id as { name?: string } | undefined)?.name;

/** The scoped tables among `nodes` (a table, or a table under an alias). */
function targets(nodes: Node[], scoped: ReadonlySet<string>): Target[] {
  const out: Target[] = [];
  for (const n of nodes) {
    const table = n.kind === 'AliasNode' ? (n.node as Node) : n;
    if (table.kind !== 'TableNode') continue;
    const t = name((table.table as { identifier?: unknown }).identifier);
    if (t && scoped.has(t)) out.push({ table: t, ref: n.kind === 'AliasNode' ? (name(n.alias) ?? t) : t });
  }
  return out;
}

function need(q: Node, t: Target): void {
  const where = (q.where as { where?: Node } | undefined)?.where;
  if (!where || !andTerms(where).some((term) => pinsTenant(term, t)))
    refuse(q.kind === 'SelectQueryNode' ? 'select from' : q.kind === 'UpdateQueryNode' ? 'update' : 'delete from', t.table);
}

/** The top-level AND terms of a condition (parentheses looked through). */
function andTerms(n: Node): Node[] {
  if (n.kind === 'AndNode') return [...andTerms(n.left as Node), ...andTerms(n.right as Node)];
  if (n.kind === 'ParensNode') return andTerms(n.node as Node);
  return [n];
}

/** `tenant_id = x` or `tenant_id in (…)`, the column unqualified or qualified by the table's name or alias. */
function pinsTenant(n: Node, t: Target): boolean {
  if (n.kind !== 'BinaryOperationNode') return false;
  const op = (n.operator as { operator?: string }).operator;
  if (op !== '=' && op !== 'in') return false;
  const left = n.leftOperand as Node;
  if (left.kind !== 'ReferenceNode') return false;
  if (name((left.column as { column?: unknown }).column) !== 'tenant_id') return false;
  const qualifier = left.table ? name(((left.table as Node).table as { identifier?: unknown }).identifier) : undefined;
  return qualifier === undefined || qualifier === t.ref || qualifier === t.table;
}

function refuse(what: string, table: string): never {
  throw new AppError('internal', {}, { table }, `tenant guard: ${what} ${table} without its tenant (docs/tenants.md)`);
}
