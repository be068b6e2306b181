import type Database from 'better-sqlite3';

/**
 * better-sqlite3 statements prepared once per SQL text (raw ones apart), at most `max` kept: statements with
 * IN lists of many lengths must not grow the cache without bound, so it starts over when full.
 */
export function preparedCache(db: Database.Database, max: number): (text: string, raw: boolean) => Database.Statement {
  const prepared = new Map<string, Database.Statement>();
  return (text, raw) => {
    const key = raw ? `raw:${text}` : text;
    let st = prepared.get(key);
    if (!st) {
      if (prepared.size >= max) prepared.clear();
      st = db.prepare(text);
      if (raw) st.raw(true);
      prepared.set(key, st);
    }
    return st;
  };
}
