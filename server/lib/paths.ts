/**
 * The one place where user-supplied paths and names are checked. Everything
 * downstream (drivers, catalogue) receives clean relative POSIX paths: no
 * leading slash, no empty, `.` or `..` segments, each segment a legal name.
 */
import { AppError } from '../errors';

/** Folders the service keeps on each storage; users can neither create nor address them. */
export const RESERVED_NAMES = ['.service-trash', '.versions'] as const;
/** Staging folder for in-flight uploads; same filesystem as the target so publishing is a rename. */
export const STAGING_DIR = '.service-staging';
/** Prefix of the temp files of atomic writes; hidden from listings and sync. */
export const TEMP_PREFIX = '.~fd-';

export const DEFAULT_MAX_NAME_BYTES = 255;

/** True for names the catalogue never shows (service folders and in-flight temp files). */
export function isInternalName(name: string): boolean {
  return (RESERVED_NAMES as readonly string[]).includes(name) || name === STAGING_DIR || name.startsWith(TEMP_PREFIX);
}

/** Whether a relative path lies in a service folder (trash, versions, staging) at any depth. */
export function isInternalPath(rel: string): boolean {
  // Every internal name starts with a dot: most paths have no segment that does, and need no split
  // (a sync asks for each of a million walked entries).
  return (rel.startsWith('.') || rel.includes('/.')) && rel.split('/').some(isInternalName);
}

export type NameIssue = 'empty' | 'slash' | 'backslash' | 'control' | 'dots';

/** Why a name breaks the spec's rules, or null when it is fine (length aside). */
export function nameIssue(name: string): NameIssue | null {
  if (name.trim() === '') return 'empty';
  if (name.includes('/')) return 'slash';
  if (name.includes('\\')) return 'backslash';
  // C0, DEL and C1 (U+0080–U+009F, e.g. NEL U+0085): all control characters.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'control';
  if (/^[. ]+$/.test(name)) return 'dots';
  return null;
}

/**
 * Throws the spec's error for a bad name: `name_not_allowed` (with `reason`),
 * `name_too_long` (bytes over `maxBytes`), or `reserved_name` unless allowed.
 */
export function checkName(name: string, opts: { maxBytes?: number; allowReserved?: boolean } = {}): string {
  const issue = nameIssue(name);
  if (issue) throw new AppError('name_not_allowed', { reason: issue }, { code: 'NAME_NOT_ALLOWED', reason: issue });
  const max = opts.maxBytes ?? DEFAULT_MAX_NAME_BYTES;
  if (Buffer.byteLength(name, 'utf8') > max) throw new AppError('name_too_long', { max }, { max });
  if (!opts.allowReserved && isInternalName(name)) throw new AppError('reserved_name', { name }, { name });
  return name;
}

/**
 * Splits a relative path into checked segments. `..` anywhere is refused
 * (`bad_path`); empty and `.` segments are dropped.
 */
export function cleanRel(rel: string, opts: { maxBytes?: number; allowReserved?: boolean } = {}): string {
  if (typeof rel !== 'string') throw new AppError('bad_path');
  if (rel.includes('\0')) throw new AppError('bad_path', {}, { reason: 'nul' });
  const out: string[] = [];
  for (const seg of rel.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') throw new AppError('bad_path', {}, { reason: 'traversal' });
    out.push(checkName(seg, opts));
  }
  return out.join('/');
}

export interface UiPath {
  /** Storage name or uid from the first segment; null for `/`. */
  storage: string | null;
  /** Clean relative path inside the storage; '' for its root. */
  rel: string;
}

/** The longest UI path a request may name (characters): entries deeper than that are not catalogued either. */
export const MAX_PATH_CHARS = 8192;

/** Parses a UI path `/<storage name or uid>/<relative path>`. */
export function parseUiPath(path: unknown, opts: { allowReserved?: boolean } = {}): UiPath {
  if (typeof path !== 'string' || path.length > MAX_PATH_CHARS) throw new AppError('bad_path');
  if (path.includes('\0')) throw new AppError('bad_path', {}, { reason: 'nul' });
  const trimmed = path.replace(/^\/+/, '');
  if (trimmed === '') return { storage: null, rel: '' };
  const slash = trimmed.indexOf('/');
  const storage = slash < 0 ? trimmed : trimmed.slice(0, slash);
  if (storage === '..' || storage === '.') throw new AppError('bad_path', {}, { reason: 'traversal' });
  return { storage, rel: cleanRel(slash < 0 ? '' : trimmed.slice(slash + 1), opts) };
}

/** Parses a share path `<storage name>://<relative path>`. */
export function parseSharePath(path: unknown): UiPath {
  if (typeof path !== 'string') throw new AppError('bad_path');
  const m = /^([^/]+):\/\/(.*)$/.exec(path);
  if (!m) return parseUiPath(path);
  return { storage: m[1], rel: cleanRel(m[2]) };
}

export const joinRel = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);
export const parentRel = (rel: string): string => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');
export const baseName = (rel: string): string => rel.slice(rel.lastIndexOf('/') + 1);
export const uiPath = (storage: string, rel: string): string => (rel === '' ? `/${storage}` : `/${storage}/${rel}`);
export const extOf = (name: string): string => {
  const i = name.lastIndexOf('.');
  return i > 0 ? name.slice(i + 1).toLowerCase() : '';
};
/** True when `rel` equals `ancestor` or lies below it. */
export const isWithin = (rel: string, ancestor: string): boolean => ancestor === '' || rel === ancestor || rel.startsWith(ancestor + '/');
