/**
 * Text out of markup (the XML parts of office files, HTML), fed chunk by
 * chunk so a part is never held whole: tags are dropped, the elements that
 * end a paragraph, row or line become line breaks and cells or tabs spaces,
 * entities are decoded, and the result goes into a capped sink. Not a
 * parser: nothing is validated, no DOCTYPE or entity declaration is read,
 * and malformed input just yields less text.
 */

export interface StripRules {
  /** Elements (qualified names) whose start or end breaks a line: paragraphs, rows, `<br>`. */
  breaks: ReadonlySet<string>;
  /** Elements that separate words: cells, tabs. */
  spaces?: ReadonlySet<string>;
  /** Only text inside one of these elements counts (`w:t` in a Word body); absent: all text does. */
  keepOnly?: ReadonlySet<string>;
  /** Elements whose content never counts (`script`, `style`). */
  skip?: ReadonlySet<string>;
  /** Named entities beyond XML's five (HTML). */
  entities?: Readonly<Record<string, string>>;
  /** Element names compare without case (HTML). */
  foldCase?: boolean;
}

/** Collects text up to `cap` characters; `full` once reached (the feeder stops reading). */
export class TextSink {
  private parts: string[] = [];
  private length = 0;
  /** Whether text was dropped at the cap. */
  capped = false;

  constructor(readonly cap: number) {}

  get full(): boolean {
    return this.capped;
  }

  add(s: string): void {
    if (this.capped || s === '') return;
    const room = this.cap - this.length;
    if (s.length > room) {
      this.parts.push(s.slice(0, room));
      this.length = this.cap;
      this.capped = true;
      return;
    }
    this.parts.push(s);
    this.length += s.length;
  }

  /** The text with runs of blanks made one space and blank lines dropped. */
  text(): string {
    return this.parts
      .join('')
      .replace(/[^\S\n]+/g, ' ')
      .replace(/ ?\n[\s]*/g, '\n')
      .trim();
  }
}

const XML_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
/** The named HTML entities worth knowing for search text; others are dropped. */
export const HTML_ENTITIES: Record<string, string> = {
  ...XML_ENTITIES,
  nbsp: ' ',
  shy: '',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  laquo: '«',
  raquo: '»',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  copy: '©',
  reg: '®',
  euro: '€',
  szlig: 'ß',
  oslash: 'ø',
  Oslash: 'Ø',
  aelig: 'æ',
  AElig: 'Æ',
  ...accented(),
};

/** `&eacute;`-style names of the accented Latin letters: the letter with its combining mark, composed. */
function accented(): Record<string, string> {
  const marks: Record<string, string> = { acute: '\u0301', grave: '\u0300', circ: '\u0302', uml: '\u0308', tilde: '\u0303', cedil: '\u0327', ring: '\u030A' };
  const out: Record<string, string> = {};
  for (const letter of 'aeiouycnAEIOUYCN')
    for (const [name, mark] of Object.entries(marks)) {
      const c = (letter + mark).normalize('NFC');
      if (c.length === 1) out[letter + name] = c;
    }
  return out;
}
/** A tag longer than this is dropped unread (no real element comes near it). */
const MAX_TAG = 64 * 1024;

export class MarkupText {
  private rest = '';
  /** Depth inside `keepOnly` and `skip` elements. */
  private keeping = 0;
  private skipping = 0;
  /** Inside a comment, CDATA section or over-long tag that a chunk boundary cut. */
  private until: string | null = null;
  private cdata = false;

  constructor(
    private rules: StripRules,
    private sink: TextSink,
  ) {}

  push(chunk: string): void {
    const s = this.rest + chunk;
    this.rest = '';
    let i = 0;
    while (i < s.length && !this.sink.full) {
      if (this.until) {
        const end = s.indexOf(this.until, i);
        if (end < 0) {
          if (this.cdata) this.text(s.slice(i, Math.max(i, s.length - 2)), false);
          this.rest = this.cdata ? s.slice(Math.max(i, s.length - 2)) : s.slice(Math.max(i, s.length - this.until.length));
          return;
        }
        if (this.cdata) this.text(s.slice(i, end), false);
        i = end + this.until.length;
        this.until = null;
        this.cdata = false;
        continue;
      }
      const lt = s.indexOf('<', i);
      if (lt < 0) {
        // Keep a cut entity for the next chunk.
        const amp = s.lastIndexOf('&');
        const cut = amp >= i && amp > s.length - 12 && !s.includes(';', amp) ? amp : s.length;
        this.text(s.slice(i, cut), true);
        this.rest = s.slice(cut);
        return;
      }
      this.text(s.slice(i, lt), true);
      if (s.startsWith('<!--', lt)) {
        this.until = '-->';
        i = lt + 4;
        continue;
      }
      if (s.startsWith('<![CDATA[', lt)) {
        this.until = ']]>';
        this.cdata = true;
        i = lt + 9;
        continue;
      }
      const gt = s.indexOf('>', lt);
      if (gt < 0) {
        if (s.length - lt > MAX_TAG) {
          this.until = '>';
          i = s.length;
          continue;
        }
        this.rest = s.slice(lt);
        return;
      }
      this.tag(s.slice(lt + 1, gt));
      i = gt + 1;
    }
  }

  private tag(body: string): void {
    if (body[0] === '?' || body[0] === '!') return;
    const closing = body[0] === '/';
    const selfClosing = body.endsWith('/');
    const m = /^\/?([^\s/>]+)/.exec(body);
    if (!m) return;
    const name = this.rules.foldCase ? m[1].toLowerCase() : m[1];
    const r = this.rules;
    if (r.breaks.has(name)) this.sink.add('\n');
    else if (r.spaces?.has(name)) this.sink.add(' ');
    if (selfClosing) return;
    const step = closing ? -1 : 1;
    if (r.keepOnly?.has(name)) this.keeping = Math.max(0, this.keeping + step);
    if (r.skip?.has(name)) this.skipping = Math.max(0, this.skipping + step);
  }

  private text(s: string, decode: boolean): void {
    if (s === '' || this.skipping > 0 || (this.rules.keepOnly && this.keeping === 0)) return;
    this.sink.add(decode ? decodeEntities(s, this.rules.entities ?? XML_ENTITIES) : s);
  }
}

/** Character references and the given named entities decoded; unknown names dropped. */
export function decodeEntities(s: string, named: Readonly<Record<string, string>> = XML_ENTITIES): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/g, (_m, ref: string) => {
    if (ref[0] !== '#') return named[ref] ?? '';
    const cp = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : '';
  });
}

const set = (list: string) => new Set(list.split(' '));

/** HTML: block elements break lines; scripts, styles and templates say nothing. */
export const HTML_RULES: StripRules = {
  breaks: set('p div br li tr h1 h2 h3 h4 h5 h6 title section article header footer blockquote pre dt dd hr table ul ol'),
  spaces: set('td th'),
  skip: set('script style template noscript svg'),
  entities: HTML_ENTITIES,
  foldCase: true,
};
