/**
 * A real WebDAV server for tests: `rclone serve webdav` on a free loopback
 * port, serving its own temp dir, optionally over TLS with a self-signed
 * certificate.
 */
import { spawn, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { freePort, tempDir } from './tools';
import { childLifecycle, selfSignedCert, type RestartableServer } from './servers';

export interface RcloneWebdav extends RestartableServer {
  url: string;
  /** The directory served at the URL's root. */
  dir: string;
}

/** Starts rclone webdav; resolves once the port accepts connections. */
export async function startRcloneWebdav(opts: { tls?: boolean } = {}): Promise<RcloneWebdav> {
  const tmp = tempDir('filedock-webdav-');
  const dir = join(tmp.dir, 'data');
  execFileSync('mkdir', ['-p', dir]);
  const port = await freePort();
  const user = 'dock';
  const pass = 'secret-pass';
  const cert = opts.tls ? selfSignedCert(tmp.dir) : undefined;
  const args = ['serve', 'webdav', dir, '--addr', `127.0.0.1:${port}`, '--user', user, '--pass', pass, '--log-level', 'ERROR'];
  if (cert) args.push('--cert', cert.certPath, '--key', cert.keyPath);
  const server: RcloneWebdav = {
    url: `${cert ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    dir,
    user,
    pass,
    fingerprint: cert?.fingerprint,
    ...childLifecycle(
      port,
      () =>
        spawn('rclone', args, {
          stdio: ['ignore', 'ignore', 'inherit'],
          env: { ...process.env, RCLONE_CONFIG: join(tmp.dir, 'rclone.conf') },
        }),
      tmp.cleanup,
    ),
  };
  await server.start();
  return server;
}
