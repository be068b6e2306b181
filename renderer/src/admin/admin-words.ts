/** Codes the admin pages show in words (the code stays in the cell's title); an unknown code shows as it is. */
import type { MessageKey, Translate } from '../i18n';
import { en } from '../i18n/en';

const words = (prefix: string, code: string, t: Translate): string => {
  const key = `${prefix}${code}`;
  return key in en ? t(key as MessageKey) : code;
};

/** An audit action: `file.upload` → "Wrote a file". */
export const auditWords = (action: string, t: Translate): string => words('audit.a.', action, t);

/** A sync run's or an op's state: `completed` → "Done". */
export const statusWords = (status: string, t: Translate): string => words('ops.status.', status, t);

/** Every action that has words, for the filter's suggestions. */
export const KNOWN_ACTIONS: string[] = Object.keys(en)
  .filter((k) => k.startsWith('audit.a.'))
  .map((k) => k.slice('audit.a.'.length));
