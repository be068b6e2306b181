/**
 * Names smbclient can carry. Commands reach smbclient as one `-c` string that
 * it splits on `;` and tokenises on `"`, and SMB itself forbids the Windows
 * reserved characters (Samba would show such files under mangled 8.3 names).
 * We refuse those names instead of escaping them: there is no escape syntax.
 */
import { AppError } from '../../../errors';

// `*` `?` `<` `>` `"` are also wildcards in smbclient masks (`ls`, `del`, `deltree`).
const FORBIDDEN = /[";*?<>:|]/;

/** Throws `name_not_allowed` (with `reason`) for a segment SMB or smbclient cannot carry. */
export function checkSmbName(name: string): void {
  const bad = FORBIDDEN.exec(name);
  if (bad) throw new AppError('name_not_allowed', { reason: `character ${bad[0]}` }, { code: 'NAME_NOT_ALLOWED', reason: 'smb_character' });
  // A trailing space would also be lost in smbclient's padded `ls` columns.
  if (/[. ]$/.test(name)) throw new AppError('name_not_allowed', { reason: 'trailing dot or space' }, { code: 'NAME_NOT_ALLOWED', reason: 'smb_trailing' });
}

/** Checks every segment of a clean relative path; '' (the root) passes. */
export function checkSmbPath(rel: string): void {
  if (rel !== '') rel.split('/').forEach(checkSmbName);
}

/** A path argument for an smbclient command: share-relative, double-quoted. */
export const quote = (sharePath: string): string => `"${sharePath.replace(/\//g, '\\')}"`;
