/**
 * Search snippets (docs/files-api.md, "Search"): a short piece of a file's
 * stored text around the first hit of one of the query's terms, as plain
 * text, each hit of any term in it between SNIPPET_MARK_START and
 * SNIPPET_MARK_END (two private-use characters, removed from the text first,
 * so nothing in a document can fake one). A client escapes the text and turns
 * each pair into a highlight.
 */

export const SNIPPET_MARK_START = '\uE000';
export const SNIPPET_MARK_END = '\uE001';
/** Characters of the body fetched before the hit, and in all (the database cuts this window). */
export const WINDOW_BEFORE = 80;
export const WINDOW_SPAN = 320;
/** Characters kept before and after the hit in the snippet, cut back to a word boundary. */
const KEEP_BEFORE = 60;
const KEEP_AFTER = 100;

/** The query as a case-free pattern (runs of blanks match any run of blanks). */
export const queryPattern = (q: string) =>
  new RegExp(
    q
      .trim()
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\s+/g, '\\s+'),
    'iu',
  );

/**
 * The snippet of `window` (a piece of the body starting WINDOW_BEFORE characters before the first hit of
 * `q`, or at the body's start): cut around that hit, then every hit of `q` and of the `also` terms in it
 * marked. No hit in the window (a case the database folds differently): its start, unmarked.
 */
export function snippetOf(window: string, q: string, also: string[] = []): string {
  const text = window.replace(/[\uE000\uE001]/g, '').replace(/\s+/g, ' ');
  const hit = queryPattern(q).exec(text);
  if (!hit) return text.length > KEEP_BEFORE + KEEP_AFTER ? `${cutEnd(text, KEEP_BEFORE + KEEP_AFTER)}…` : text;
  const at = hit.index;
  const end = at + hit[0].length;
  let start = Math.max(0, at - KEEP_BEFORE);
  // Begin at a word: drop the partial word the cut left, unless that is all there is before the hit.
  if (start > 0) {
    const space = text.indexOf(' ', start);
    if (space >= 0 && space < at) start = space + 1;
  }
  const after = cutEnd(text.slice(end), KEEP_AFTER);
  // The window started WINDOW_BEFORE characters before the hit when the body had that many: more text before.
  const lead = start > 0 || at >= WINDOW_BEFORE ? '…' : '';
  const tail = end + after.length < text.length || window.length >= WINDOW_SPAN ? '…' : '';
  return `${lead}${markAll(text.slice(start, end) + after, [q, ...also])}${tail}`;
}

/** Every hit of any of `terms` in `text` between the markers (the longest term first where hits overlap). */
function markAll(text: string, terms: string[]): string {
  const sources = [...new Set(terms)].sort((a, b) => b.length - a.length).map((t) => queryPattern(t).source);
  return text.replace(new RegExp(sources.join('|'), 'giu'), (m) => `${SNIPPET_MARK_START}${m}${SNIPPET_MARK_END}`);
}

/** The first `n` characters of `s`, cut back to the last word boundary when one is near. */
function cutEnd(s: string, n: number): string {
  if (s.length <= n) return s;
  const cut = s.slice(0, n);
  const space = cut.lastIndexOf(' ');
  return space > n / 2 ? cut.slice(0, space) : cut;
}
