/**
 * Migrations written once for SQLite and PostgreSQL (docs/postgresql.md,
 * "Writing a migration"). A migration is a list of steps built with Kysely's
 * schema builder against this kit; `portable()` compiles it for each dialect
 * (compiled only, never run by Kysely: migrations are applied as SQL text).
 * The kit's types carry what differs: SQLite's INTEGER is 64-bit, so it is
 * PostgreSQL's bigint; COLLATE NOCASE is citext; a rowid alias is an identity.
 * Only what has no portable form (triggers, full-text search) is written per
 * dialect with `per()`.
 */
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  type ColumnDefinitionBuilder,
  type Compilable,
  type CreateTableBuilder,
  type SchemaModule,
} from 'kysely';
import type { Migration } from './types';

export type Dialect = 'sqlite' | 'postgres';
/** A column type as `addColumn` takes it (Kysely does not export the name). */
type DataTypeExpression = Parameters<CreateTableBuilder<string, string>['addColumn']>[1];

const compileOnly = (dialect: Dialect) =>
  new Kysely<unknown>({
    dialect: {
      createAdapter: () => (dialect === 'sqlite' ? new SqliteAdapter() : new PostgresAdapter()),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => (dialect === 'sqlite' ? new SqliteIntrospector(db) : new PostgresIntrospector(db)),
      createQueryCompiler: () => (dialect === 'sqlite' ? new SqliteQueryCompiler() : new PostgresQueryCompiler()),
    },
  }).schema;

export interface Kit {
  dialect: Dialect;
  schema: SchemaModule;
  /** A 64-bit integer (SQLite INTEGER, PostgreSQL bigint); also 0/1 flags, sizes, ms times. */
  int: DataTypeExpression;
  /** Floating point (SQLite REAL, PostgreSQL double precision). */
  real: DataTypeExpression;
  /** Text compared without case (SQLite COLLATE NOCASE, PostgreSQL citext). */
  ciText: DataTypeExpression;
  /** A generated surrogate key: SQLite's rowid alias; PostgreSQL's identity, by default so a copy keeps its ids. */
  serial: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** WITHOUT ROWID on SQLite (the primary key is the table); nothing elsewhere. */
  withoutRowid: <T extends CreateTableBuilder<string, string>>(t: T) => T;
  /** SQL written once per dialect, for what has no portable form. */
  per: (byDialect: Record<Dialect, string>) => string;
}

const kits: Record<Dialect, Kit> = {
  sqlite: {
    dialect: 'sqlite',
    schema: compileOnly('sqlite'),
    int: 'integer',
    real: 'real',
    ciText: sql`text collate nocase`,
    serial: (c) => c.primaryKey(),
    withoutRowid: (t) => t.modifyEnd(sql`without rowid`) as typeof t,
    per: (s) => s.sqlite,
  },
  postgres: {
    dialect: 'postgres',
    schema: compileOnly('postgres'),
    int: 'bigint',
    real: 'double precision',
    ciText: sql`citext`,
    serial: (c) => c.generatedByDefaultAsIdentity().primaryKey(),
    withoutRowid: (t) => t,
    per: (s) => s.postgres,
  },
};

/** One statement: built with the kit's schema builder, or SQL text (portable DML, or from `per()`). */
export type Step = Compilable<unknown> | string;

/** Compiles `build` for one dialect into a script of statements. */
export function render(build: (k: Kit) => Step[], dialect: Dialect): string {
  return (
    build(kits[dialect])
      .map((s) => {
        if (typeof s === 'string') return s.trim().replace(/;$/, '');
        const c = s.compile();
        // DDL inlines its values; a parameter here would be silently lost in a script.
        if (c.parameters.length) throw new Error(`migration step has parameters: ${c.sql}`);
        return c.sql;
      })
      .filter((s) => s !== '')
      .join(';\n') + ';\n'
  );
}

/** A migration written once, compiled for SQLite and PostgreSQL. */
export function portable(name: string, build: (k: Kit) => Step[]): Migration {
  return { name, sql: render(build, 'sqlite'), postgres: render(build, 'postgres') };
}
