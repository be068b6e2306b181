/**
 * What the one-shot CLI commands need from the data folder: the database,
 * the bus with its audit subscriber, auth, and the catalogue with every
 * driver registered. The queue is not started: ops a command enqueues are run
 * by the server (at once when it is running on the same data folder).
 */
import type { Config } from '../config';
import { openDatabase } from '../db';
import { EventBus } from '../events';
import { attachAudit } from '../audit';
import { JobQueue } from '../jobs';
import { createAuth } from '../auth';
import { DriverManager, DriverRegistry, builtinDrivers } from '../storage';
import { createCatalogue } from '../catalogue';
import { layout, ensureDirs, loadSecretKey } from '../lib/data-dir';
import { createLogger } from '../lib/log';

export async function openCliContext(config: Config) {
  const dirs = layout(config.dataDirResolved);
  ensureDirs(dirs);
  const db = openDatabase(dirs.db, undefined, { busyTimeoutMs: 5000 }); // a tool may block while it waits
  const bus = new EventBus(db.sqlite);
  attachAudit(db, bus);
  const secretKey = loadSecretKey(dirs);
  const log = createLogger('warn');
  const auth = createAuth(db, bus, { secretKey, sessionTtlMs: config.sessionTtl, maxAttempts: 5, lockMs: 1000, desktopBootstrap: '' });
  const registry = new DriverRegistry();
  for (const d of builtinDrivers) registry.register(d);
  const manager = new DriverManager(registry, { secretKey, stateDir: dirs.state });
  const queue = new JobQueue(db.sqlite);
  const catalogue = createCatalogue({ db, bus, queue, registry, manager, secretKey, log, demo: config.demo });
  const cliRequest = { ip: 'cli', ua: 'service-cli' };
  return {
    db, bus, auth, registry, catalogue, dirs, cliRequest,
    async close() {
      await bus.flush();
      await manager.closeAll();
      await db.close();
    },
  };
}
