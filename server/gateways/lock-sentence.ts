/**
 * The sentence a protocol client is shown for a file an app has locked
 * (catalogue/file-locks): which app holds it, why and until when. Each
 * protocol's error table uses it for its own refusal form (WebDAV 423, S3
 * AccessDenied, SFTP and FTP permission denied); English, as protocol
 * clients have no language to ask for. Null for anything else.
 */
import { isAppError } from '../errors';
import { t } from '../lib/i18n';

export function lockSentence(e: unknown): string | null {
  return isAppError(e) && e.code === 'locked' && e.params.plugin ? t('en', 'locked', e.params) : null;
}
