/**
 * A real FTP/FTPS server for tests: Debian's vsftpd from a private config on
 * free loopback ports, with an anonymous login whose password is checked
 * (`secure_email_list_enable`), so a wrong password is refused like a real
 * account's. The anonymous root is root-owned (vsftpd insists) and holds a
 * writable `pub` folder owned by user `ftp`: use roots below `/pub`.
 */
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { freePort, tempDir } from './tools';
import { childLifecycle, descendants, killQuietly, selfSignedCert, type RestartableServer } from './servers';

export type VsftpdTls = 'off' | 'explicit' | 'implicit';

/** `stop()` and `crash()` also end every forked session, which would otherwise keep serving. */
export interface Vsftpd extends RestartableServer {
  host: string;
  /** Host path of the anonymous root; FTP path `/pub/x` is `join(rootDir, 'pub/x')`. */
  rootDir: string;
  tls: VsftpdTls;
}

const PASV_PORTS = 8;

/** Starts vsftpd; resolves once the control port accepts connections. */
export async function startVsftpd(opts: { tls?: VsftpdTls; denyFile?: string } = {}): Promise<Vsftpd> {
  const tls = opts.tls ?? 'off';
  const tmp = tempDir('filedock-ftp-');
  chmodSync(tmp.dir, 0o755);
  const rootDir = join(tmp.dir, 'root');
  mkdirSync(join(rootDir, 'pub'), { recursive: true });
  chmodSync(rootDir, 0o755);
  const ftpUid = Number(execFileSync('id', ['-u', 'ftp']).toString().trim());
  const ftpGid = Number(execFileSync('id', ['-g', 'ftp']).toString().trim());
  chownSync(join(rootDir, 'pub'), ftpUid, ftpGid);
  const pass = 'secret-pass';
  writeFileSync(join(tmp.dir, 'passwords'), `${pass}\n`);
  const port = await freePort();
  const pasv = await freePortRange(PASV_PORTS);
  const cert = tls === 'off' ? undefined : selfSignedCert(tmp.dir);
  const lines = [
    'listen=YES',
    'listen_ipv6=NO',
    'listen_address=127.0.0.1',
    `listen_port=${port}`,
    'background=NO',
    'seccomp_sandbox=NO',
    'anonymous_enable=YES',
    'local_enable=NO',
    'write_enable=YES',
    'anon_upload_enable=YES',
    'anon_mkdir_write_enable=YES',
    'anon_other_write_enable=YES',
    'anon_world_readable_only=NO',
    'anon_umask=022',
    `anon_root=${rootDir}`,
    'secure_email_list_enable=YES',
    `email_password_file=${join(tmp.dir, 'passwords')}`,
    'pasv_enable=YES',
    'pasv_address=127.0.0.1',
    `pasv_min_port=${pasv}`,
    `pasv_max_port=${pasv + PASV_PORTS - 1}`,
    'connect_from_port_20=NO',
    'dirmessage_enable=NO',
    'use_localtime=NO',
    'utf8_filesystem=YES',
    'xferlog_enable=NO',
    `vsftpd_log_file=${join(tmp.dir, 'vsftpd.log')}`,
    'secure_chroot_dir=/var/run/vsftpd/empty',
    'max_per_ip=0',
    'max_clients=0',
  ];
  if (opts.denyFile) lines.push(`deny_file=${opts.denyFile}`);
  if (cert) {
    lines.push(
      'ssl_enable=YES',
      `rsa_cert_file=${cert.certPath}`,
      `rsa_private_key_file=${cert.keyPath}`,
      'allow_anon_ssl=YES',
      'force_anon_logins_ssl=YES',
      'force_anon_data_ssl=YES',
      'ssl_ciphers=HIGH',
      'require_ssl_reuse=YES',
    );
    if (tls === 'implicit') lines.push('implicit_ssl=YES');
  }
  const confPath = join(tmp.dir, 'vsftpd.conf');
  writeFileSync(confPath, lines.join('\n') + '\n', { mode: 0o600 });

  const server: Vsftpd = {
    host: '127.0.0.1',
    port,
    user: 'anonymous',
    pass,
    rootDir,
    tls,
    fingerprint: cert?.fingerprint,
    // vsftpd forks a process (tree) per session; stopping the listener alone leaves them serving.
    ...childLifecycle(
      port,
      () => spawn('vsftpd', [confPath], { stdio: ['ignore', 'ignore', 'inherit'] }),
      tmp.cleanup,
      (pid) => descendants(pid).forEach(killQuietly),
    ),
  };
  await server.start();
  return server;
}

/** The first of `count` consecutive free loopback ports (for vsftpd's passive range). */
async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20000 + Math.floor(Math.random() * 40000);
    let ok = true;
    for (let p = first; p < first + count && ok; p++) ok = await isFree(p);
    if (ok) return first;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}
