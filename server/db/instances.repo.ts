/**
 * Which Filedock servers use this database now. On PostgreSQL every connection of a server names it
 * (`application_name`, serverAppName), and a killed server's connections end with it (its sockets
 * close); a hung or cut-off server's may stay, and then its leases pass as before. A server that starts
 * with no other one running takes over at once what a predecessor left, as on SQLite: its ops, its
 * finalizes, its temp files. A command-line tool names itself apart and does not count.
 */
import type { Db } from './index';

export const serverAppName = (instanceId: string): string => `filedock server ${instanceId}`;
export const cliAppName = (instanceId: string): string => `filedock cli ${instanceId}`;

export class InstancesRepo {
  constructor(private db: Db) {}

  /** Whether a server other than `self` holds a connection to this database (SQLite: never; its data folder is locked). */
  async othersRunning(self: string): Promise<boolean> {
    if (this.db.dialect !== 'postgres') return false;
    const rows = await this.db.async.sql(
      "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'filedock server %' AND application_name <> ? LIMIT 1",
      [serverAppName(self)],
    );
    return rows.length > 0;
  }
}
