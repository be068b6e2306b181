/**
 * Key verbs and permissions in plain words, in the reader's language. The
 * server's own descriptions (`GET /api/admin/permissions`) are English and
 * admin-only, so known ids get ours; an unknown id (an app's permission)
 * falls back to the server's description, then to the id itself.
 */
import type { KeyVerb } from '../api/types';
import type { MessageKey, Translate } from '../i18n';

/** The verbs a person may give a key, in the order the form shows them (`admin` only for admins). */
export const KEY_VERBS: readonly KeyVerb[] = ['files:read', 'files:write', 'shares:write', 'ai.use', 'admin'];

const WORDS: Record<string, [MessageKey, MessageKey]> = {
  'files:read': ['perm.files_read', 'perm.files_read.hint'],
  'files:write': ['perm.files_write', 'perm.files_write.hint'],
  'shares:write': ['perm.shares_write', 'perm.shares_write.hint'],
  'ai.use': ['perm.ai_use', 'perm.ai_use.hint'],
  'ai.assistant': ['perm.ai_assistant', 'perm.ai_assistant.hint'],
  admin: ['perm.admin', 'perm.admin.hint'],
};

/** Short name of a verb or permission ("Read files"). */
export const permissionName = (id: string, t: Translate, fallback?: string): string => (WORDS[id] ? t(WORDS[id][0]) : fallback || id);

/** What it allows, one phrase ("browse, search, preview and download"); '' when unknown and no fallback. */
export const permissionHint = (id: string, t: Translate, fallback?: string): string => (WORDS[id] ? t(WORDS[id][1]) : (fallback ?? ''));

/** A key's verbs as one line ("Read files, Change files"). */
export const verbsInWords = (verbs: readonly string[], t: Translate): string => verbs.map((v) => permissionName(v, t)).join(', ');
