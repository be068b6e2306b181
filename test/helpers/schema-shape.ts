/**
 * The structure of a migrated schema, read back from the database itself, in a
 * form that does not depend on how the DDL was spelled (quotes, case, the order
 * of column constraints): SQLite through its PRAGMAs plus the CHECK and COLLATE
 * clauses of the stored CREATE text; PostgreSQL through its catalogue. Used by
 * the migration tests to prove a port changed nothing on SQLite and that both
 * dialects end with the same tables, columns, keys and indexes.
 */
import type Database from 'better-sqlite3';
import type pg from 'pg';

/** Lower case, no identifier quotes, no spaces except between words. */
export const normSql = (s: string): string =>
  s
    .toLowerCase()
    .replace(/["`]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/ ?([(),=<>!]) ?/g, '$1')
    .trim();

/** Splits the inside of `CREATE TABLE t ( ... )` at its top-level commas. */
function tableParts(createSql: string): string[] {
  const open = createSql.indexOf('(');
  const parts: string[] = [];
  let depth = 0;
  let quote = '';
  let cur = '';
  for (const ch of createSql.slice(open + 1)) {
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === "'") quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')') {
      if (depth === 0) break;
      depth--;
    } else if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
      continue;
    }
    cur += ch;
  }
  parts.push(cur);
  return parts.map(normSql);
}

/** Every `check(...)` expression of a table (column or table level), normalised, sorted. */
function checks(createSql: string): string[] {
  const out: string[] = [];
  for (const part of tableParts(createSql)) {
    let i = part.indexOf('check(');
    while (i >= 0) {
      let depth = 0;
      let j = i + 5;
      for (; j < part.length; j++) {
        if (part[j] === '(') depth++;
        else if (part[j] === ')' && --depth === 0) break;
      }
      out.push(part.slice(i + 6, j));
      i = part.indexOf('check(', j);
    }
  }
  return out.sort();
}

/** `column -> collation` for columns declared with COLLATE. */
function collations(createSql: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of tableParts(createSql)) {
    const m = /^(\w+) .*\bcollate (\w+)/.exec(part);
    if (m && !/^(constraint|primary|unique|check|foreign)\b/.test(part)) out[m[1]] = m[2];
  }
  return out;
}

export interface SqliteShape {
  tables: Record<string, unknown>;
  triggers: Record<string, string>;
}

export function sqliteShape(db: Database.Database): SqliteShape {
  const tables: Record<string, unknown> = {};
  const list = db.prepare("SELECT name, type, wr FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{
    name: string;
    type: string;
    wr: number;
  }>;
  const master = (type: string, name: string) =>
    (db.prepare('SELECT sql FROM sqlite_master WHERE type = ? AND name = ?').get(type, name) as { sql: string | null } | undefined)?.sql ?? '';
  for (const t of list) {
    const sql = master('table', t.name);
    if (t.type === 'virtual' || t.type === 'shadow') {
      tables[t.name] = { type: t.type, sql: t.type === 'virtual' ? normSql(sql) : undefined };
      continue;
    }
    const columns = (db.prepare(`SELECT * FROM pragma_table_xinfo(?) ORDER BY cid`).all(t.name) as Array<Record<string, unknown>>).map((c) => ({
      name: c.name,
      type: String(c.type).toLowerCase(),
      notnull: c.notnull,
      dflt: c.dflt_value === null ? null : normSql(String(c.dflt_value)),
      pk: c.pk,
      hidden: c.hidden,
    }));
    const fks = db.prepare('SELECT "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq').all(t.name);
    const indexes = (
      db.prepare('SELECT name, "unique", origin, partial FROM pragma_index_list(?) ORDER BY name').all(t.name) as Array<{
        name: string;
        unique: number;
        origin: string;
        partial: number;
      }>
    )
      .map((ix) => ({
        ...ix,
        // Constraint indexes get numbered names from their position; the key columns say which one it is.
        name: ix.origin === 'c' ? ix.name : ix.origin,
        keys: (
          db.prepare('SELECT name, "desc", coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno').all(ix.name) as Array<Record<string, unknown>>
        ).map((k) => `${k.name}${k.desc ? ' desc' : ''} ${String(k.coll).toLowerCase()}`),
        where: ix.partial ? normSql(master('index', ix.name)).replace(/^.*?\)where /, '') : null,
      }))
      .sort((a, b) => (a.name + a.keys.join()).localeCompare(b.name + b.keys.join()));
    tables[t.name] = { type: t.type, withoutRowid: t.wr, columns, checks: checks(sql), collations: collations(sql), fks, indexes };
  }
  const triggers: Record<string, string> = {};
  for (const r of db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name").all() as Array<{ name: string; sql: string }>) {
    triggers[r.name] = normSql(r.sql);
  }
  return { tables, triggers };
}

/**
 * What both dialects must agree on: per table the columns (name, not null,
 * primary key position), foreign keys, and the named indexes.
 */
export interface CommonShape {
  tables: Record<string, { columns: string[]; fks: string[] }>;
  indexes: string[];
}

export function commonFromSqlite(db: Database.Database): CommonShape {
  const shape = sqliteShape(db);
  const tables: CommonShape['tables'] = {};
  const indexes: string[] = [];
  for (const [name, t] of Object.entries(shape.tables) as Array<[string, any]>) {
    if (t.type !== 'table') continue;
    tables[name] = {
      columns: t.columns.map((c: any) => `${c.name}${c.notnull || c.pk ? ' not null' : ''}${c.pk ? ` pk${c.pk}` : ''}`),
      fks: t.fks.map((f: any) => `${f.from} -> ${f.table}.${f.to} on delete ${f.on_delete.toLowerCase()}`).sort(),
    };
    for (const ix of t.indexes) if (ix.origin === 'c') indexes.push(`${name}.${ix.name}`);
  }
  return { tables, indexes: indexes.sort() };
}

export async function commonFromPostgres(c: pg.Client): Promise<CommonShape> {
  const tables: CommonShape['tables'] = {};
  const cols = await c.query<{ table_name: string; column_name: string; is_nullable: string; pk: number | null }>(`
    SELECT c.table_name, c.column_name, c.is_nullable,
      (SELECT array_position(con.conkey, a.attnum) FROM pg_constraint con
        JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attname = c.column_name
        WHERE con.conrelid = (quote_ident(c.table_name))::regclass AND con.contype = 'p') AS pk
    FROM information_schema.columns c WHERE c.table_schema = 'public' ORDER BY c.table_name, c.ordinal_position`);
  for (const r of cols.rows) {
    const t = (tables[r.table_name] ??= { columns: [], fks: [] });
    t.columns.push(`${r.column_name}${r.is_nullable === 'NO' ? ' not null' : ''}${r.pk ? ` pk${r.pk}` : ''}`);
  }
  const fks = await c.query<{ tbl: string; from_col: string; ref: string; to_col: string; del: string }>(`
    SELECT con.conrelid::regclass::text AS tbl, a.attname AS from_col, con.confrelid::regclass::text AS ref, fa.attname AS to_col, con.confdeltype AS del
    FROM pg_constraint con
    CROSS JOIN LATERAL unnest(con.conkey, con.confkey) AS k(from_num, to_num)
    JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.from_num
    JOIN pg_attribute fa ON fa.attrelid = con.confrelid AND fa.attnum = k.to_num
    WHERE con.contype = 'f' AND con.connamespace = 'public'::regnamespace`);
  const action: Record<string, string> = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null', d: 'set default' };
  for (const r of fks.rows) tables[r.tbl.replace(/"/g, '')].fks.push(`${r.from_col} -> ${r.ref.replace(/"/g, '')}.${r.to_col} on delete ${action[r.del]}`);
  for (const t of Object.values(tables)) t.fks.sort();
  // Indexes made by constraints (primary key, unique) are the `c` of neither side's named set.
  const ix = await c.query<{ tbl: string; name: string }>(`
    SELECT i.indrelid::regclass::text AS tbl, ci.relname AS name FROM pg_index i
    JOIN pg_class ci ON ci.oid = i.indexrelid
    WHERE ci.relnamespace = 'public'::regnamespace AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)`);
  return { tables, indexes: ix.rows.map((r) => `${r.tbl.replace(/"/g, '')}.${r.name}`).sort() };
}
