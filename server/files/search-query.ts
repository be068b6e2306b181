/**
 * The search box's syntax (docs/files-api.md, "Search"): words separated by blanks must all be found
 * (each in the name or in the text, not necessarily together); `"a phrase"` is found as typed, blanks
 * included; a leading `-` excludes a word or a phrase. Everything else is literal: `*`, `%`, quotes
 * inside a word. Terms are substrings, so a word also finds what it begins (a prefix).
 */

export interface SearchQuery {
  /** Found in the name or the text, every one. */
  all: string[];
  /** Found in neither. */
  none: string[];
}

/** Terms a query may hold: each costs a clause. */
export const MAX_TERMS = 16;

/** The query's terms; blanks inside a phrase are kept as one space each. */
export function parseQuery(q: string): SearchQuery {
  const out: SearchQuery = { all: [], none: [] };
  // A phrase ("…", the closing quote optional at the end) or a word, either with a leading '-'.
  for (const m of q.matchAll(/(-?)(?:"([^"]*)"?|(\S+))/g)) {
    const term = (m[2] ?? m[3]).trim().replace(/\s+/g, ' ');
    // A lone '-' or empty quotes say nothing.
    if (term === '' || term === '-') continue;
    (m[1] ? out.none : out.all).push(term);
  }
  // Once each, longest first: the longest is the most selective, so the databases start from it.
  const tidy = (xs: string[]) =>
    [...new Set(xs.map((x) => x.toLowerCase()))].map((l) => xs.find((x) => x.toLowerCase() === l)!).sort((a, b) => b.length - a.length);
  return { all: tidy(out.all), none: tidy(out.none) };
}
