/**
 * A private Samba server for tests: its own smb.conf, state/lock/cache/pid/log
 * dirs and share folder under a temp dir, bound to a free loopback port only.
 * The SMB account maps to the Unix user running the tests (smbpasswd needs an
 * existing Unix account), which works when the tests run as root.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort, tempDir } from './tools';
import { waitForPort, waitForPortClosed } from './servers';

export interface Smbd {
  host: string;
  port: number;
  share: string;
  user: string;
  password: string;
  /** Local folder behind the share, to check results from outside SMB. */
  shareDir: string;
  /** Stops the server (idempotent); `start` brings it back on the same port with the same data. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its temp dir. */
  destroy(): Promise<void>;
}

const SHARE = 'files';
const PASSWORD = 'Smb-test-pass1';

/** Starts smbd on a free loopback port; resolves once the port accepts connections. */
export async function startSmbd(): Promise<Smbd> {
  const { dir, cleanup } = tempDir('filedock-smbd-');
  const port = await freePort();
  const user = userInfo().username;
  const shareDir = join(dir, 'share');
  for (const d of ['state', 'lock', 'cache', 'pid', 'log', 'private', 'ncalrpc', 'share']) mkdirSync(join(dir, d), { recursive: true });
  const conf = join(dir, 'smb.conf');
  writeFileSync(
    conf,
    [
      '[global]',
      '  server role = standalone server',
      `  smb ports = ${port}`,
      '  bind interfaces only = yes',
      '  interfaces = lo',
      `  state directory = ${dir}/state`,
      `  lock directory = ${dir}/lock`,
      `  cache directory = ${dir}/cache`,
      `  pid directory = ${dir}/pid`,
      `  private dir = ${dir}/private`,
      `  ncalrpc dir = ${dir}/ncalrpc`,
      `  log file = ${dir}/log/log.%m`,
      `  passdb backend = tdbsam:${dir}/private/passdb.tdb`,
      '  disable netbios = yes',
      '  load printers = no',
      '  printcap name = /dev/null',
      '  disable spoolss = yes',
      '  map to guest = never',
      `[${SHARE}]`,
      `  path = ${shareDir}`,
      '  read only = no',
      '',
    ].join('\n'),
  );
  const added = spawnSync('smbpasswd', ['-c', conf, '-s', '-a', user], { input: `${PASSWORD}\n${PASSWORD}\n`, encoding: 'utf8' });
  if (added.status !== 0) {
    cleanup();
    throw new Error(`smbpasswd failed: ${added.stderr || added.stdout}`);
  }

  let child: ChildProcess | null = null;
  const start = async () => {
    if (child) return;
    // Own process group, so stop() also ends the per-connection children.
    const started = spawn('smbd', ['-F', '--no-process-group', '-s', conf, '-d', '0'], { stdio: 'ignore', detached: true });
    child = started;
    await waitForPort(port, started);
  };
  const stop = async () => {
    const c = child;
    if (!c?.pid) return;
    child = null;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    try {
      process.kill(-c.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await exited;
    await waitForPortClosed(port, 5000);
  };
  await start();
  return {
    host: '127.0.0.1',
    port,
    share: SHARE,
    user,
    password: PASSWORD,
    shareDir,
    start,
    stop,
    destroy: async () => {
      await stop();
      cleanup();
    },
  };
}
