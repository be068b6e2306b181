/**
 * A real OpenSSH server for tests: Debian's sshd from a private config on a
 * free loopback port, with a temporary ed25519 host key and a generated client
 * key in its own temp dir. Sessions are forced into `internal-sftp` started in
 * `dataDir`, running as the current user (root in CI, hence PermitRootLogin).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort, tempDir } from './tools';
import { descendants, killQuietly, stopChild } from './servers';

export type HostKeyType = 'ed25519' | 'ecdsa' | 'rsa';

export interface SshdOptions {
  /** Offer password login too (only the login user's real password would pass: for wrong-password tests). */
  password?: boolean;
  /** Host keys the server holds; default only ed25519. */
  hostKeyTypes?: HostKeyType[];
}

export interface SshdServer {
  host: string;
  port: number;
  user: string;
  /** Private dir holding the config, keys and pid file. */
  dir: string;
  /** Folder every SFTP session starts in; tests put their storage roots below it. */
  dataDir: string;
  /** The client's private key (OpenSSH format), authorised for `user`. */
  clientKey: string;
  clientKeyPath: string;
  /** The current host key of `type` (default the first configured) as `ssh-ed25519 AAAA...`. */
  hostKeyLine(type?: HostKeyType): string;
  /** The `SHA256:...` fingerprint of that key, as OpenSSH prints it. */
  hostFingerprint(type?: HostKeyType): string;
  /** (Re)starts the listener on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Kills the listener and every session process it forked. Idempotent. */
  stop(): Promise<void>;
  /** Kills the session processes only, as a network drop would; the listener stays up. */
  dropSessions(): void;
  /** Open client connections (sshd forks one child per connection). */
  connectionCount(): number;
  /** Replaces the host keys with fresh ones and restarts the listener. */
  swapHostKey(): Promise<void>;
  /** Stops the server and removes its temp dir. */
  dispose(): Promise<void>;
}

const SSHD = '/usr/sbin/sshd';

function keygen(path: string, type: HostKeyType = 'ed25519'): void {
  rmSync(path, { force: true });
  rmSync(`${path}.pub`, { force: true });
  execFileSync('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-C', 'filedock-test', '-f', path]);
}

/** Starts sshd; call `dispose()` in the test's `after`. */
export async function startSshd(opts: SshdOptions = {}): Promise<SshdServer> {
  mkdirSync('/run/sshd', { recursive: true });
  const { dir, cleanup } = tempDir('filedock-sshd-');
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  const port = await freePort();
  const user = userInfo().username;
  const hostKeyTypes = opts.hostKeyTypes ?? ['ed25519'];
  const hostKeyPath = (type: HostKeyType) => join(dir, `host_${type}`);
  const makeHostKeys = () => hostKeyTypes.forEach((t) => keygen(hostKeyPath(t), t));
  const clientKeyPath = join(dir, 'client_ed25519');
  makeHostKeys();
  keygen(clientKeyPath);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${clientKeyPath}.pub`), { mode: 0o600 });
  const conf = join(dir, 'sshd_config');
  writeFileSync(
    conf,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      ...hostKeyTypes.map((t) => `HostKey ${hostKeyPath(t)}`),
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      // The temp dir lives under world-writable /tmp, which StrictModes refuses.
      'StrictModes no',
      'UsePAM no',
      'PermitRootLogin yes',
      `PasswordAuthentication ${opts.password ? 'yes' : 'no'}`,
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      `AllowUsers ${user}`,
      'MaxStartups 50',
      'MaxSessions 20',
      'LogLevel INFO',
      'Subsystem sftp internal-sftp',
      `ForceCommand internal-sftp -d ${dataDir}`,
      '',
    ].join('\n'),
  );

  let child: ChildProcess | null = null;
  let log = '';

  const start = (): Promise<void> =>
    new Promise((resolve, reject) => {
      log = '';
      const proc = spawn(SSHD, ['-f', conf, '-D', '-e'], { stdio: ['ignore', 'ignore', 'pipe'] });
      child = proc;
      const timer = setTimeout(() => reject(new Error(`sshd did not start in 5s:\n${log}`)), 5000);
      proc.stderr!.setEncoding('utf8').on('data', (s: string) => {
        log = (log + s).slice(-8000);
        if (log.includes(`Server listening on 127.0.0.1 port ${port}`)) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.on('exit', (code) => {
        clearTimeout(timer);
        if (child === proc) child = null;
        reject(new Error(`sshd exited with ${code}:\n${log}`));
      });
    });

  const dropSessions = (): void => {
    if (child?.pid) descendants(child.pid).forEach(killQuietly);
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    if (!proc?.pid) return;
    dropSessions();
    await stopChild(proc, 'SIGKILL');
  };

  const publicKey = (type = hostKeyTypes[0]): string =>
    readFileSync(`${hostKeyPath(type)}.pub`, 'utf8')
      .trim()
      .split(/\s+/)
      .slice(0, 2)
      .join(' ');

  await start();
  return {
    host: '127.0.0.1',
    port,
    user,
    dir,
    dataDir,
    clientKey: readFileSync(clientKeyPath, 'utf8'),
    clientKeyPath,
    hostKeyLine: publicKey,
    hostFingerprint: (type) =>
      'SHA256:' +
      createHash('sha256')
        .update(Buffer.from(publicKey(type).split(' ')[1], 'base64'))
        .digest('base64')
        .replace(/=+$/, ''),
    start,
    stop,
    dropSessions,
    connectionCount: () => (child?.pid ? descendants(child.pid, 1).length : 0),
    swapHostKey: async () => {
      await stop();
      makeHostKeys();
      await start();
    },
    dispose: async () => {
      await stop();
      cleanup();
    },
  };
}
