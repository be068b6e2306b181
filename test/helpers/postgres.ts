/**
 * A throwaway PostgreSQL cluster for tests: initdb in a temp dir (as the
 * `postgres` user: the tests run as root and PostgreSQL refuses root), trust
 * authentication, a free loopback port and a private socket dir, durability
 * off for speed. Never the distribution's default cluster on 5432. Stopped and
 * removed by `destroy()` (also, at worst, when the test process exits).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, tempDir } from './tools';

export interface PgCluster {
  port: number;
  /** The cluster's data folder (its postmaster.pid names the server process). */
  dataDir: string;
  /** A connection URL for `database` (default `postgres`). */
  url(database?: string): string;
  /** Creates an empty database (UTF8, C collation: byte order like SQLite) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (an outage: `immediate` drops every connection at once), keeping its data. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops the server (fast shutdown) and removes its folder; idempotent. */
  destroy(): Promise<void>;
}

/** The newest installed PostgreSQL's bin folder (Debian keeps them out of PATH), or null. */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : null;
}

/**
 * A skip reason when PostgreSQL is not installed (outside CI), null when it is.
 * Throws under CI=true so a missing PostgreSQL fails the run instead of skipping it.
 */
export function needPostgres(): string | null {
  if (postgresBin()) return null;
  const msg = 'PostgreSQL not found: install it with "apt-get install --no-install-recommends postgresql"';
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`[CI] ${msg}`);
  return msg;
}

const asPostgres = (bin: string, args: string[]) =>
  execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', [bin, ...args].map(shellQuote).join(' ')], { stdio: 'pipe', timeout: 120_000 });
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Starts a private cluster; resolves once it accepts connections. `maxConnections`: the one cluster a
 * whole test run shares (scripts/test-postgres.ts) serves several test files at once.
 */
export async function startPostgres(o: { maxConnections?: number } = {}): Promise<PgCluster> {
  const bin = postgresBin();
  if (!bin) throw new Error(needPostgres() ?? 'PostgreSQL not found');
  const { dir, cleanup } = tempDir('filedock-pg-');
  chownSync(dir, uidOf('postgres'), gidOf('postgres'));
  chmodSync(dir, 0o700);
  const data = join(dir, 'data');
  const port = await freePort();
  asPostgres(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=${o.maxConnections ?? 60}`;
  const pgCtl = (...args: string[]) => asPostgres(join(bin, 'pg_ctl'), ['-D', data, ...args]);
  pgCtl('-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start');
  let stopped = false;
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    spawnSync('su', ['postgres', '-s', '/bin/sh', '-c', `${join(bin, 'pg_ctl')} -D ${shellQuote(data)} -m fast -w stop`], { stdio: 'ignore', timeout: 60_000 });
    cleanup();
  };
  // A crashed or terminated test run must not leave a postmaster behind.
  process.once('exit', stopNow);
  exitOnSignals();
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    dataDir: data,
    url,
    async createDatabase(name) {
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
      } finally {
        await c.end();
      }
      return url(name);
    },
    async stop(mode = 'fast') {
      pgCtl('-m', mode, '-w', 'stop');
    },
    async start() {
      pgCtl('-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start');
    },
    async destroy() {
      process.removeListener('exit', stopNow);
      stopNow();
    },
  };
}

/**
 * A database copied from `template` (a migrated one: scripts/test-postgres.ts) on the cluster whose
 * `postgres` database `adminUrl` names; returns its URL. Copies from one template by several test
 * files at once may meet "source database is being accessed by other users": tried again then.
 */
export async function createFromTemplate(adminUrl: string, name: string, template: string): Promise<string> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(template)}`);
        break;
      } catch (e) {
        if (!/being accessed by other users/.test(String(e)) || attempt >= 50) throw e;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await c.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * The test runner ends a timed-out file with SIGTERM (and a user with SIGINT), which skips 'exit'
 * listeners unless the signal is turned into an exit: then every cluster's `stopNow` runs.
 */
let signalsHooked = false;
function exitOnSignals(): void {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => process.exit(128 + (sig === 'SIGTERM' ? 15 : 2)));
}

function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user]).toString().trim());
}
function gidOf(user: string): number {
  return Number(execFileSync('id', ['-g', user]).toString().trim());
}
