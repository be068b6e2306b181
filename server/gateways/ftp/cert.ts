/**
 * The FTPS certificate: the one configured (`SERVICE_FTP_TLS_CERT` / `_KEY`),
 * else a self-signed one made once into the data dir and kept (key 0600).
 * Node's crypto makes keys but cannot sign an X.509 certificate, so the
 * self-signed one comes from the `openssl` CLI (Debian's `openssl` package);
 * without it and without a configured pair the listener reports why it is off.
 */
import { execFile } from 'node:child_process';
import { X509Certificate, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface FtpCert {
  cert: Buffer;
  key: Buffer;
  /** SHA-256 fingerprint, for clients that pin a self-signed certificate. */
  fingerprint: string;
}

/**
 * Loads the configured pair, or the data dir's self-signed pair (made on the
 * first call). Throws with a sentence fit for the admin's status when neither
 * can be had.
 */
export async function loadCert(o: { certPath: string; keyPath: string; stateDir: string }): Promise<FtpCert> {
  if (o.certPath || o.keyPath) {
    if (!o.certPath || !o.keyPath) throw new Error('set both SERVICE_FTP_TLS_CERT and SERVICE_FTP_TLS_KEY');
    return read(o.certPath, o.keyPath);
  }
  const dir = join(o.stateDir, 'ftp');
  const certPath = join(dir, 'tls.crt');
  const keyPath = join(dir, 'tls.key');
  if (!existsSync(certPath) || !existsSync(keyPath)) await makeSelfSigned(dir, certPath, keyPath);
  return read(certPath, keyPath);
}

function read(certPath: string, keyPath: string): FtpCert {
  const cert = readFileSync(certPath);
  return { cert, key: readFileSync(keyPath), fingerprint: new X509Certificate(cert).fingerprint256 };
}

/** Writes the pair under temporary names and renames them in place, key first, so a crash leaves no half pair. */
async function makeSelfSigned(dir: string, certPath: string, keyPath: string): Promise<void> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `.tmp-${randomBytes(6).toString('hex')}`;
  const [c, k] = [certPath + tmp, keyPath + tmp];
  const name = hostname().replace(/[^\w.-]/g, '') || 'filedock';
  try {
    await promisify(execFile)(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        k,
        '-out',
        c,
        '-days',
        '3650',
        '-subj',
        `/CN=${name}`,
        '-addext',
        `subjectAltName=DNS:${name},DNS:localhost,IP:127.0.0.1,IP:::1`,
      ],
      { timeout: 30_000 },
    );
  } catch (e) {
    rmSync(c, { force: true });
    rmSync(k, { force: true });
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      missing ? 'no TLS certificate: install openssl or set SERVICE_FTP_TLS_CERT and SERVICE_FTP_TLS_KEY' : `openssl failed: ${(e as Error).message}`,
    );
  }
  chmodSync(k, 0o600);
  renameSync(k, keyPath);
  renameSync(c, certPath);
}
