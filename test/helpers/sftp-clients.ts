/**
 * SFTP clients for the gateway tests: OpenSSH's `sftp` in batch mode (the
 * password typed by sshpass) and ssh2's client for protocol-level checks.
 * Both run asynchronously: the server under test shares this process.
 */
import { spawn } from 'node:child_process';
import ssh2, { type Client, type ClientChannel, type SFTPWrapper } from 'ssh2';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cmd` (wrapped in `timeout`) with `input` on stdin. */
export function run(cmd: string, args: string[], o: { input?: string; env?: Record<string, string>; seconds?: number } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const c = spawn('timeout', [String(o.seconds ?? 60), cmd, ...args], { env: { ...process.env, ...o.env } });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    c.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code, stdout, stderr }));
    c.stdin.end(o.input ?? '');
  });
}

/** OpenSSH `sftp -b -` with a password (sshpass); a failing command ends the batch with exit 1. */
export function sftpBatch(port: number, user: string, password: string, commands: string[]): Promise<Run> {
  return run(
    'sshpass',
    [
      '-e',
      'sftp',
      '-o',
      'BatchMode=no',
      '-b',
      '-',
      '-P',
      String(port),
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'PubkeyAuthentication=no',
      '-o',
      `User=${user}`,
      '127.0.0.1',
    ],
    {
      input: commands.join('\n') + '\n',
      env: { SSHPASS: password },
    },
  );
}

export interface Ssh {
  client: Client;
  /** The host key the server showed. */
  hostKey: Buffer;
  sftp(): Promise<SFTPWrapper>;
  end(): void;
}

/** Connects with ssh2's client; rejects with the client's error (e.g. "All configured authentication methods failed"). */
export function sshConnect(
  port: number,
  auth: { username: string; password?: string; privateKey?: string; authHandler?: ssh2.ConnectConfig['authHandler']; debug?: (line: string) => void },
): Promise<Ssh> {
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    let hostKey: Buffer = Buffer.alloc(0);
    client.on('error', reject);
    client.on('ready', () =>
      resolve({
        client,
        hostKey,
        sftp: () => new Promise((res, rej) => client.sftp((e, s) => (e ? rej(e) : res(s)))),
        end: () => client.end(),
      }),
    );
    client.connect({
      host: '127.0.0.1',
      port,
      ...auth,
      tryKeyboard: false,
      // Generous: a loaded CI machine runs three suites at once beside this in-process server.
      readyTimeout: 30_000,
      hostVerifier: (key: Buffer) => {
        hostKey = key;
        return true;
      },
    });
  });
}

/** Promisified ssh2 SFTP calls; a refusal rejects with the SFTP status as `code`. */
export const p = {
  open: (s: SFTPWrapper, path: string, flags: number | string) =>
    new Promise<Buffer>((res, rej) => s.open(path, flags as never, (e, h) => (e ? rej(e) : res(h)))),
  write: (s: SFTPWrapper, h: Buffer, data: Buffer, pos: number) =>
    new Promise<void>((res, rej) => s.write(h, data, 0, data.length, pos, (e) => (e ? rej(e) : res()))),
  read: (s: SFTPWrapper, h: Buffer, len: number, pos: number) =>
    new Promise<Buffer>((res, rej) => s.read(h, Buffer.alloc(len), 0, len, pos, (e, n, buf) => (e ? rej(e) : res(buf.subarray(0, n))))),
  close: (s: SFTPWrapper, h: Buffer) => new Promise<void>((res, rej) => s.close(h, (e) => (e ? rej(e) : res()))),
  stat: (s: SFTPWrapper, path: string) => new Promise<ssh2.Stats>((res, rej) => s.stat(path, (e, st) => (e ? rej(e) : res(st)))),
  readdir: (s: SFTPWrapper, path: string) => new Promise<ssh2.FileEntryWithStats[]>((res, rej) => s.readdir(path, (e, l) => (e ? rej(e) : res(l)))),
  realpath: (s: SFTPWrapper, path: string) => new Promise<string>((res, rej) => s.realpath(path, (e, r) => (e ? rej(e) : res(r)))),
  mkdir: (s: SFTPWrapper, path: string) => new Promise<void>((res, rej) => s.mkdir(path, (e) => (e ? rej(e) : res()))),
  rmdir: (s: SFTPWrapper, path: string) => new Promise<void>((res, rej) => s.rmdir(path, (e) => (e ? rej(e) : res()))),
  unlink: (s: SFTPWrapper, path: string) => new Promise<void>((res, rej) => s.unlink(path, (e) => (e ? rej(e) : res()))),
  rename: (s: SFTPWrapper, from: string, to: string) => new Promise<void>((res, rej) => s.rename(from, to, (e) => (e ? rej(e) : res()))),
  symlink: (s: SFTPWrapper, target: string, path: string) => new Promise<void>((res, rej) => s.symlink(target, path, (e) => (e ? rej(e) : res()))),
  writeFile: (s: SFTPWrapper, path: string, data: Buffer | string) => new Promise<void>((res, rej) => s.writeFile(path, data, (e) => (e ? rej(e) : res()))),
  readFile: (s: SFTPWrapper, path: string) => new Promise<Buffer>((res, rej) => s.readFile(path, (e, b) => (e ? rej(e) : res(b)))),
  /** The status code of a refusal (NO_SUCH_FILE 2, PERMISSION_DENIED 3, FAILURE 4, BAD_MESSAGE 5, OP_UNSUPPORTED 8). */
  code: async (x: Promise<unknown>): Promise<number | 'ok'> =>
    x.then(
      () => 'ok' as const,
      (e) => e.code,
    ),
};

/** Asks the server for a channel of `kind`; resolves to the refusal's message, or 'accepted'. */
export function tryChannel(c: Client, kind: 'shell' | 'exec' | 'subsystem' | 'forwardOut' | 'forwardIn'): Promise<string> {
  return new Promise((resolve) => {
    const done = (e: Error | undefined, ch?: ClientChannel) => {
      ch?.close();
      resolve(e ? e.message : 'accepted');
    };
    if (kind === 'shell') c.shell(done);
    else if (kind === 'exec') c.exec('id', done);
    else if (kind === 'subsystem') c.subsys('netconf', done);
    else if (kind === 'forwardOut') c.forwardOut('127.0.0.1', 1, '127.0.0.1', 22, done);
    else c.forwardIn('127.0.0.1', 0, (e) => resolve(e ? e.message : 'accepted'));
  });
}
