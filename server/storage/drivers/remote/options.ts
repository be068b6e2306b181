/**
 * Config reading shared by the network drivers (webdav, ftp): lenient scalars
 * (the CLI and the admin form send strings), the remote root guard, the call
 * timeout and the TLS trust choice (CA chain, pinned fingerprint, or any
 * self-signed certificate).
 */
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import type { DriverField } from '../../types';

export type Config = Record<string, unknown>;
export interface Problem {
  field: string;
  message: string;
}

export const DEFAULT_TIMEOUT_S = 30;
const MAX_TIMEOUT_S = 3600;

/**
 * A copy of `config` where each field's canonical key holds its value, read
 * from an alias when the canonical key is absent. The registry already does
 * this; drivers repeat it so a direct `create()` behaves the same.
 */
export function withAliases(config: Config, fields: DriverField[]): Config {
  const out: Config = { ...config };
  for (const f of fields) {
    if (out[f.key] !== undefined && out[f.key] !== '') continue;
    const alias = f.aliases?.find((a) => config[a] !== undefined && config[a] !== '');
    if (alias) out[f.key] = config[alias];
  }
  return out;
}

/** The trimmed string at `key`, or undefined when absent or blank. */
export function str(config: Config, key: string): string | undefined {
  const v = config[key];
  if (typeof v === 'number') return String(v);
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** A boolean from `true`/`false` or the strings `true|1|yes|on` / `false|0|no|off`; `fallback` when absent. */
export function bool(config: Config, key: string, fallback: boolean): boolean {
  const v = config[key];
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && v.trim() !== '') return /^(true|1|yes|on)$/i.test(v.trim());
  return fallback;
}

/** An integer from a number or a numeric string; `fallback` when absent, NaN when unreadable. */
export function int(config: Config, key: string, fallback: number): number {
  const v = config[key];
  if (v === undefined || v === null || v === '') return fallback;
  const n = typeof v === 'number' ? v : /^\s*-?\d+\s*$/.test(String(v)) ? Number(v) : NaN;
  return Number.isInteger(n) ? n : NaN;
}

/**
 * The storage root as an absolute-or-relative POSIX path without a trailing
 * slash, or a problem. The guard refuses the backend's root (`''`, `/`) and
 * any `.`/`..` segment, so a storage always points at a sub-folder.
 */
export function remoteRoot(value: string | undefined): { root: string } | { problem: string } {
  if (value === undefined) return { problem: 'is required and must name a sub-folder' };
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return { problem: 'must not contain control characters or backslashes' };
  const segments = value.split('/').filter((s) => s !== '');
  if (segments.length === 0) return { problem: 'must name a sub-folder, not the server root' };
  if (segments.some((s) => s === '.' || s === '..')) return { problem: 'must not contain "." or ".." segments' };
  return { root: (value.startsWith('/') ? '/' : '') + segments.join('/') };
}

/** Milliseconds of the `timeout_s` key (default 30 s, 1 s to 1 h), or a problem. */
export function timeoutMs(config: Config): { ms: number } | { problem: string } {
  const s = int(config, 'timeout_s', DEFAULT_TIMEOUT_S);
  if (!(s >= 1 && s <= MAX_TIMEOUT_S)) return { problem: `must be an integer between 1 and ${MAX_TIMEOUT_S}` };
  return { ms: s * 1000 };
}

/** How a TLS peer is trusted: the system CAs (default), one pinned certificate, or any self-signed one. */
export interface TlsTrust {
  /** Upper-case hex SHA-256 of the server certificate, no separators. */
  fingerprint?: string;
  allowSelfSigned: boolean;
}

/** Reads `tls_fingerprint` (hex, colons/spaces allowed, optional `sha256:` prefix) and `allow_self_signed`. */
export function tlsTrust(config: Config): { trust: TlsTrust } | { problem: Problem } {
  const raw = str(config, 'tls_fingerprint');
  const allowSelfSigned = bool(config, 'allow_self_signed', false);
  if (raw === undefined) return { trust: { allowSelfSigned } };
  const hex = raw
    .replace(/^sha256:/i, '')
    .replace(/[\s:]/g, '')
    .toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) return { problem: { field: 'tls_fingerprint', message: 'must be the 64 hex digits of the certificate SHA-256' } };
  return { trust: { fingerprint: hex, allowSelfSigned } };
}

/**
 * Options for `tls.connect`. Chain checks stay on unless the admin pinned a
 * certificate (the pin replaces them) or allowed self-signed certificates.
 */
export function tlsConnectOptions(trust: TlsTrust): ConnectionOptions {
  return { rejectUnauthorized: !(trust.fingerprint || trust.allowSelfSigned) };
}

/** The mismatch error when `socket`'s certificate breaks the pin, else null (also null without a pin). */
export function pinError(socket: TLSSocket, trust: TlsTrust): Error | null {
  if (!trust.fingerprint) return null;
  const got = (socket.getPeerCertificate()?.fingerprint256 ?? '').replace(/:/g, '').toUpperCase();
  if (got === trust.fingerprint) return null;
  return Object.assign(new Error(`TLS certificate fingerprint mismatch (server sent sha256 ${got || 'nothing'})`), {
    code: 'ERR_TLS_PIN_MISMATCH',
  });
}

/**
 * Destroys `socket` as soon as its handshake shows a certificate other than
 * the pinned one: at that point nothing of the request has left the client yet.
 * A resumed session shows no certificate; `trustResumed` accepts it when the
 * only session ever offered came from a connection that passed the pin.
 */
export function enforcePin(socket: TLSSocket, trust: TlsTrust, opts: { trustResumed?: boolean } = {}): void {
  if (!trust.fingerprint) return;
  socket.once('secureConnect', () => {
    if (opts.trustResumed && socket.isSessionReused()) return;
    const err = pinError(socket, trust);
    if (err) socket.destroy(err);
  });
}
