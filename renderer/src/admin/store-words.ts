/**
 * Pure helpers of the app store pages (docs/app-store.md): a store refusal in
 * words from its `details.reason` (or the reason kept in a connection's
 * `last_error`), an entry's description in the reader's language, the page
 * arithmetic of the catalogue.
 */
import type { MessageKey, Translate } from '../i18n';

/** Every `details.reason` (and switch code) the store routes answer; each has a sentence `store.reason.<reason>`. */
const REASONS = [
  'timeout',
  'unreachable',
  'http_status',
  'key_changed',
  'signature_bad',
  'too_large',
  'bad_index',
  'index_mismatch',
  'sha_mismatch',
  'size_mismatch',
  'incompatible_version',
  'already_installed',
  'newer_installed',
  'permission_not_approved',
  'package_signature',
  'bad_package',
  'driver_refused',
  'driver_in_use',
  'store_disabled',
  'connected',
  'app_store_disabled',
  'plugins_disabled',
] as const;
type Reason = (typeof REASONS)[number];
const isReason = (v: unknown): v is Reason => typeof v === 'string' && (REASONS as readonly string[]).includes(v);

/** The sentence for a reason the store routes give, or null for one this UI does not know. */
export function reasonText(reason: unknown, t: Translate): string | null {
  return isReason(reason) ? t(`store.reason.${reason}` satisfies MessageKey) : null;
}

/** What a refusal carries: an ApiError's code and details (kept structural so this stays pure). */
interface Refusal {
  code?: unknown;
  message?: unknown;
  details?: Record<string, unknown>;
}

/**
 * A store refusal in words: the sentence for `details.reason` (or for the code, for the switches), with
 * the HTTP status a store answered; otherwise the server's own message.
 */
export function storeRefusalText(e: unknown, t: Translate): string {
  const r = (e ?? {}) as Refusal;
  const text = reasonText(r.details?.reason, t) ?? reasonText(r.code, t);
  if (text && r.details?.reason === 'http_status' && r.details.status !== undefined) return `${text} (HTTP ${String(r.details.status)})`;
  if (text) return text;
  return typeof r.message === 'string' && r.message ? r.message : String(e);
}

/** A connection's `last_error` is `<code>: <reason>`; the sentence for its reason, else the text as kept. */
export function lastErrorText(lastError: string, t: Translate): string {
  const [code, reason] = lastError.split(/:\s*/, 2);
  return reasonText(reason, t) ?? reasonText(code, t) ?? lastError;
}

/** An entry's description in `lang`, else English, else any language it has. */
export function describeIn(description: Record<string, string> | null | undefined, lang: string): string {
  if (!description) return '';
  return description[lang] ?? description[lang.split('-')[0]!] ?? description.en ?? Object.values(description)[0] ?? '';
}

/** Where a page of `limit` entries starting at `offset` sits among `total`: the 1-based range shown and the neighbours. */
export function pageOf(offset: number, limit: number, total: number): { from: number; to: number; prev: number | null; next: number | null } {
  const from = total === 0 ? 0 : offset + 1;
  const to = Math.min(offset + limit, total);
  return { from, to, prev: offset > 0 ? Math.max(0, offset - limit) : null, next: offset + limit < total ? offset + limit : null };
}
