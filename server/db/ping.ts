/**
 * The health route's question to the database: answers when it answers, `database_busy` (PostgreSQL away
 * or past the pool's bound) otherwise. On the asynchronous face, so an away database never holds the event loop.
 */
import type { Db } from './index';

export async function pingDatabase(db: Db): Promise<void> {
  await db.async.sql('SELECT 1');
}
