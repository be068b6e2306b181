// Writes server/db/migrations/sqlite-shape.snapshot.json: the SQLite schema the current migrations
// build (read back through test/helpers/schema-shape.ts). Take it BEFORE porting a raw-SQL migration
// to portable(), then port and run `npm test -- server/db/migrations/dialects`: the test proves the
// port built the same schema (docs/postgresql.md, "Writing a migration").
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { migrate } from '../server/db';
import { MIGRATIONS } from '../server/db/migrations';
import { sqliteShape } from '../test/helpers/schema-shape';

const db = new Database(':memory:');
const names = migrate(db, MIGRATIONS);
const out = new URL('../server/db/migrations/sqlite-shape.snapshot.json', import.meta.url);
writeFileSync(out, JSON.stringify({ migrations: names, shape: sqliteShape(db) }, null, 1) + '\n');
console.log(`wrote the SQLite schema of ${names.length} migrations to ${out.pathname}`);
