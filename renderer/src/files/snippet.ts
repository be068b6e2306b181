/**
 * A search result's snippet (docs/files-api.md, "Search"): plain text with
 * each hit between U+E000 and U+E001. Split here into runs of text and hits;
 * the view renders each as text (React escapes it), the hits in `<mark>`.
 */
const START = '\uE000';
const END = '\uE001';

export interface SnippetPart {
  text: string;
  hit: boolean;
}

/** The runs of a snippet in order; a marker without its pair is dropped, its text kept unmarked. */
export function snippetParts(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  const push = (text: string, hit: boolean) => {
    const clean = text.replace(/[\uE000\uE001]/g, '');
    if (clean === '') return;
    const last = parts[parts.length - 1];
    if (last && last.hit === hit) last.text += clean;
    else parts.push({ text: clean, hit });
  };
  let at = 0;
  for (;;) {
    const a = snippet.indexOf(START, at);
    const b = a < 0 ? -1 : snippet.indexOf(END, a + 1);
    if (b < 0) break;
    push(snippet.slice(at, a), false);
    push(snippet.slice(a + 1, b), true);
    at = b + 1;
  }
  push(snippet.slice(at), false);
  return parts;
}
