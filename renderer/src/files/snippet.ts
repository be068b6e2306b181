/**
 * A search result's snippet (docs/files-api.md, "Search"): plain text with
 * the hit between U+E000 and U+E001. Split here into the text around the hit
 * and the hit itself; the view renders each as text (React escapes it) and
 * the hit in a `<mark>`.
 */
const START = '\uE000';
const END = '\uE001';

export interface SnippetParts {
  before: string;
  hit: string;
  after: string;
}

/** The parts of a snippet; a snippet without a whole marker pair is all `before`. */
export function snippetParts(snippet: string): SnippetParts {
  const a = snippet.indexOf(START);
  const b = a < 0 ? -1 : snippet.indexOf(END, a + 1);
  if (b < 0) return { before: snippet.replace(/[\uE000\uE001]/g, ''), hit: '', after: '' };
  return { before: snippet.slice(0, a), hit: snippet.slice(a + 1, b), after: snippet.slice(b + 1) };
}
