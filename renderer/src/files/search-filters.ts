/**
 * The search box's filters as the person set them, the query they make, the chips that show them under
 * the results (each removable on its own), and the recent searches kept in this browser.
 */
import type { MessageKey } from '../i18n';
import type { SearchQuery } from './file-api';

/** Kinds of file offered as one choice; each is a list of extensions the server filters by. */
export const KINDS = {
  documents: 'pdf doc docx odt rtf txt md xls xlsx ods csv ppt pptx odp eml',
  pdf: 'pdf',
  images: 'jpg jpeg png gif webp heic heif tif tiff bmp svg',
  audio: 'mp3 m4a flac ogg opus wav aac',
  video: 'mp4 mov mkv webm avi m4v',
} as const;
export type Kind = keyof typeof KINDS;

export interface Filters {
  kind: Kind | '';
  type: '' | 'file' | 'dir';
  /** Extensions as typed (`pdf, jpg`). */
  ext: string;
  /** Sizes in MB as typed. */
  min: string;
  max: string;
  /** Dates as `YYYY-MM-DD`. */
  after: string;
  before: string;
  /** Date taken (photos, media), as `YYYY-MM-DD`, both ends included. */
  takenFrom: string;
  takenTo: string;
  /** Only the folder open when searching. */
  scope: boolean;
}

export const NO_FILTERS: Filters = { kind: '', type: '', ext: '', min: '', max: '', after: '', before: '', takenFrom: '', takenTo: '', scope: false };

const MB = 1024 * 1024;
const exts = (typed: string) =>
  typed
    .split(/[\s,]+/)
    .map((e) => e.replace(/^\./, '').toLowerCase())
    .filter(Boolean);

/** The API query for `q` with filters `f`, searching from `folder`. A kind stands for its extensions (the box for typed ones is off meanwhile). */
export function toQuery(q: string, f: Filters, folder: string): SearchQuery {
  return {
    q: q.trim(),
    type: f.type,
    ext: (f.kind ? KINDS[f.kind].split(' ') : exts(f.ext)).join(','),
    min_size: f.min === '' ? '' : Math.round(Number(f.min) * MB),
    max_size: f.max === '' ? '' : Math.round(Number(f.max) * MB),
    after: f.after ? new Date(f.after).toISOString() : '',
    before: f.before ? new Date(`${f.before}T23:59:59`).toISOString() : '',
    taken_from: f.takenFrom ? new Date(`${f.takenFrom}T00:00:00`).toISOString() : '',
    taken_to: f.takenTo ? new Date(`${f.takenTo}T23:59:59.999`).toISOString() : '',
    path: f.scope && folder !== '/' ? folder : '',
  };
}

/** One chip: which filter it shows (removing it clears that one), the text key and its values. */
export interface Chip {
  key: keyof Filters;
  label: MessageKey;
  values?: Record<string, string>;
}

/** The chips for the filters in effect (`folder`: where the search was made from, for the scope chip). */
export function chipsOf(f: Filters, folder: string): Chip[] {
  const out: Chip[] = [];
  if (f.kind) out.push({ key: 'kind', label: `search.kind.${f.kind}` as const });
  if (f.type) out.push({ key: 'type', label: `search.type.${f.type}` as const });
  if (!f.kind && exts(f.ext).length) out.push({ key: 'ext', label: 'search.chip.ext', values: { ext: exts(f.ext).join(', ') } });
  if (f.min !== '') out.push({ key: 'min', label: 'search.chip.min', values: { mb: f.min } });
  if (f.max !== '') out.push({ key: 'max', label: 'search.chip.max', values: { mb: f.max } });
  if (f.after) out.push({ key: 'after', label: 'search.chip.after', values: { date: f.after } });
  if (f.before) out.push({ key: 'before', label: 'search.chip.before', values: { date: f.before } });
  if (f.takenFrom) out.push({ key: 'takenFrom', label: 'search.chip.taken_from', values: { date: f.takenFrom } });
  if (f.takenTo) out.push({ key: 'takenTo', label: 'search.chip.taken_to', values: { date: f.takenTo } });
  if (f.scope && folder !== '/') out.push({ key: 'scope', label: 'search.chip.scope', values: { folder } });
  return out;
}

/** The filters without the one a chip shows. */
export const without = (f: Filters, key: keyof Filters): Filters => ({ ...f, [key]: NO_FILTERS[key] });

const RECENT_KEY = 'filedock.recent-searches';
/** Searches remembered per browser. */
export const RECENT_MAX = 8;

/** The last searches typed here, newest first (none when storage is unavailable or holds junk). */
export function recentSearches(store: Pick<Storage, 'getItem'> = localStorage): string[] {
  try {
    const v: unknown = JSON.parse(store.getItem(RECENT_KEY) ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(0, RECENT_MAX) : [];
  } catch {
    return [];
  }
}

/** Puts `q` first in the recent searches (once, whatever its case was before); returns the new list. */
export function rememberSearch(q: string, store: Pick<Storage, 'getItem' | 'setItem'> = localStorage): string[] {
  const t = q.trim();
  if (!t) return recentSearches(store);
  const list = [t, ...recentSearches(store).filter((x) => x.toLowerCase() !== t.toLowerCase())].slice(0, RECENT_MAX);
  try {
    store.setItem(RECENT_KEY, JSON.stringify(list));
  } catch {
    // A full or disabled storage: the search still runs, it is just not remembered.
  }
  return list;
}
