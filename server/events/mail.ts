/**
 * Outgoing e-mail over SMTP (nodemailer), configured by the `SERVICE_SMTP_*`
 * keys. Link invitations use it now; alerts can later. A mailer without a
 * host is disabled: `send` then reports every address as failed rather than
 * pretending, so callers can answer `emailed: false`. nodemailer loads with
 * the first message, not at start.
 */
import { hostname } from 'node:os';
import type { Transporter } from 'nodemailer';
import { lazy } from '../lib/lazy';

export interface SmtpSettings {
  host: string;
  port: number;
  user: string;
  password: string;
  from: string;
  /** `tls` implicit TLS, `starttls` required upgrade, `none` plain, `auto` by port (465 → tls, else opportunistic STARTTLS). */
  secure: 'auto' | 'tls' | 'starttls' | 'none';
}

export interface MailMessage {
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  readonly enabled: boolean;
  /**
   * Sends one message per recipient (no address sees another). Never throws:
   * returns which addresses the server accepted and which failed.
   */
  send(to: string[], msg: MailMessage): Promise<{ sent: string[]; failed: string[] }>;
  close(): void;
}

/** Loose address check: one `@`, no spaces or angle brackets, a dot in the domain. */
export const isEmail = (s: string): boolean => /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/.test(s) && s.length <= 254;

/** Splits comma, semicolon, space and newline separated address lists; trims and de-duplicates. */
export function splitAddresses(...lists: Array<string | string[] | undefined>): string[] {
  const out = new Set<string>();
  for (const l of lists) for (const item of [l ?? []].flat()) for (const a of String(item).split(/[\s,;]+/)) if (a) out.add(a.trim());
  return [...out];
}

export function createMailer(s: SmtpSettings, log: (msg: string, err?: unknown) => void = () => {}): Mailer {
  if (!s.host) return { enabled: false, send: async (to) => ({ sent: [], failed: to }), close: () => {} };
  const implicit = s.secure === 'tls' || (s.secure === 'auto' && s.port === 465);
  let pool: Transporter | undefined;
  const transport = lazy(
    async () =>
      (pool = (await import('nodemailer')).default.createTransport({
        host: s.host,
        port: s.port,
        secure: implicit,
        requireTLS: s.secure === 'starttls',
        ignoreTLS: s.secure === 'none',
        auth: s.user ? { user: s.user, pass: s.password } : undefined,
        pool: true,
        maxConnections: 2,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
      })),
  );
  const from = s.from || `filedock@${hostname()}`;
  return {
    enabled: true,
    async send(to, msg) {
      const sent: string[] = [];
      const failed: string[] = [];
      await Promise.all(
        to.map(async (addr) => {
          if (!isEmail(addr)) return failed.push(addr);
          try {
            const info = await (await transport()).sendMail({ from, to: addr, subject: msg.subject, text: msg.text, html: msg.html });
            (info.rejected.length ? failed : sent).push(addr);
          } catch (e) {
            log(`mail to ${addr} failed`, e);
            failed.push(addr);
          }
        }),
      );
      return { sent: to.filter((a) => sent.includes(a)), failed: to.filter((a) => failed.includes(a)) };
    },
    close: () => pool?.close(),
  };
}
