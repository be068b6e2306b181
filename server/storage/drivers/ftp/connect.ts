/**
 * Opens one logged-in FTP session: plain, explicit TLS (AUTH TLS) or implicit
 * TLS, checks a pinned certificate before the credentials leave, and bounds
 * the whole handshake in time (basic-ftp times socket inactivity but not a
 * TLS handshake that never finishes).
 */
import { TLSSocket, type ConnectionOptions } from 'node:tls';
import { isIP } from 'node:net';
import { Client, type FTPContext } from 'basic-ftp';
import type { FtpConfig } from './config';
import { enforcePin, pinError, tlsConnectOptions, type TlsTrust } from '../remote/options';
import { unreachable } from '../remote/errors';

/** Logs in and applies binary mode, UTF-8 and (with TLS) a protected data channel. */
export async function openSession(cfg: FtpConfig): Promise<Client> {
  const client = new Client(cfg.timeoutMs);
  const tls: ConnectionOptions = {
    ...tlsConnectOptions(cfg.trust),
    host: cfg.host,
    ...(isIP(cfg.host) ? {} : { servername: cfg.host }),
  };
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    client.close();
  }, cfg.timeoutMs * 2);
  try {
    if (cfg.secure === 'implicit') await client.connectImplicitTLS(cfg.host, cfg.port, tls);
    else await client.connect(cfg.host, cfg.port);
    if (cfg.secure === 'explicit') await client.useTLS(tls);
    if (cfg.secure !== 'off') {
      const mismatch = pinError(client.ftp.socket as TLSSocket, cfg.trust);
      if (mismatch) throw mismatch;
      pinDataChannels(client.ftp, cfg.trust);
    }
    // Before login too, for servers that need it to read a non-ASCII user or password.
    await client.sendIgnoringError('OPTS UTF8 ON');
    await client.login(cfg.user, cfg.password);
    await client.useDefaultSettings();
    return client;
  } catch (e) {
    client.close();
    throw timedOut ? unreachable(`no login within ${(cfg.timeoutMs * 2) / 1000}s`) : e;
  } finally {
    clearTimeout(deadline);
  }
}

/**
 * Applies the pin to every TLS data connection too. basic-ftp assigns each new
 * data socket through `ftp.dataSocket`; wrapping that one setter is the only
 * hook it offers before the socket's handshake completes.
 */
function pinDataChannels(ftp: FTPContext, trust: TlsTrust): void {
  if (!trust.fingerprint) return;
  const inherited = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(ftp), 'dataSocket');
  if (!inherited?.get || !inherited.set) throw new Error('basic-ftp: FTPContext.dataSocket accessor not found');
  const { get, set } = inherited;
  Object.defineProperty(ftp, 'dataSocket', {
    configurable: true,
    get() {
      return get.call(this);
    },
    set(socket: unknown) {
      set.call(this, socket);
      // Data connections resume the control connection's session, which passed the pin.
      if (socket instanceof TLSSocket) enforcePin(socket, trust, { trustResumed: true });
    },
  });
}
