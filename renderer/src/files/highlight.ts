/**
 * A small syntax colouring tokenizer for the text preview and editor: comments,
 * strings, numbers, keywords and punctuation for C-like, shell/Python/YAML-like
 * and markup languages. It only classifies; it never changes the text, so the
 * tokens always concatenate back to the input.
 */
export type TokenKind = 'plain' | 'comment' | 'string' | 'number' | 'keyword' | 'tag' | 'attr' | 'punct';
export interface Token {
  kind: TokenKind;
  text: string;
}

type Family = 'c' | 'hash' | 'markup' | 'css' | 'sql' | 'none';

const FAMILY: Record<string, Family> = {
  js: 'c',
  mjs: 'c',
  cjs: 'c',
  ts: 'c',
  tsx: 'c',
  jsx: 'c',
  json: 'c',
  java: 'c',
  c: 'c',
  h: 'c',
  cpp: 'c',
  hpp: 'c',
  cs: 'c',
  go: 'c',
  rs: 'c',
  kt: 'c',
  swift: 'c',
  php: 'c',
  dart: 'c',
  scala: 'c',
  py: 'hash',
  sh: 'hash',
  bash: 'hash',
  zsh: 'hash',
  rb: 'hash',
  yml: 'hash',
  yaml: 'hash',
  toml: 'hash',
  ini: 'hash',
  conf: 'hash',
  env: 'hash',
  r: 'hash',
  pl: 'hash',
  dockerfile: 'hash',
  makefile: 'hash',
  html: 'markup',
  htm: 'markup',
  xml: 'markup',
  svg: 'markup',
  vue: 'markup',
  css: 'css',
  scss: 'css',
  less: 'css',
  sql: 'sql',
};

const KEYWORDS = new Set(
  (
    'abstract as async await break case catch class const continue def default del do elif else enum export extends false final finally ' +
    'fn for from func function if impl import in interface is lambda let match mod module mut new nil none null package pass private ' +
    'protected pub public raise return self static struct super switch this throw true try type typeof undefined use var void where while with yield ' +
    'select insert update delete into values create table drop alter and or not join left right inner outer on group by order having limit ' +
    'then fi esac done echo local export true false yes no None True False'
  ).split(' '),
);

/** Extensions the text preview opens (and colours when a family is known). */
export function isTextName(name: string, mime = ''): boolean {
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : name.toLowerCase();
  return mime.startsWith('text/') || ext in FAMILY || ['txt', 'md', 'log', 'csv', 'tsv', 'gitignore'].includes(ext) || mime === 'application/json';
}

function familyOf(name: string): Family {
  const lower = name.toLowerCase();
  const ext = lower.includes('.') ? lower.slice(lower.lastIndexOf('.') + 1) : lower;
  return FAMILY[ext] ?? 'none';
}

const RULES: Record<Exclude<Family, 'markup' | 'none'>, [TokenKind, RegExp][]> = {
  c: [
    ['comment', /\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/y],
    ['string', /"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?|`(?:\\.|[^`\\])*`?/y],
  ],
  hash: [
    ['comment', /#[^\n]*/y],
    ['string', /"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?/y],
  ],
  css: [
    ['comment', /\/\*[\s\S]*?(?:\*\/|$)/y],
    ['string', /"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?/y],
  ],
  sql: [
    ['comment', /--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/y],
    ['string', /'(?:''|[^'])*'?/y],
  ],
};
const COMMON: [TokenKind, RegExp][] = [
  ['number', /\b(?:0x[\da-f]+|\d+(?:\.\d+)?(?:e[+-]?\d+)?)\b/iy],
  ['plain', /[A-Za-z_$][\w$]*/y],
  ['punct', /[{}()[\];,.:=<>+\-*/%!&|^~?@]/y],
  ['plain', /\s+|./y],
];
const MARKUP: [TokenKind, RegExp][] = [
  ['comment', /<!--[\s\S]*?(?:-->|$)/y],
  ['tag', /<\/?[A-Za-z][\w:.-]*|\/?>/y],
  ['string', /"[^"]*"?|'[^']*'?/y],
  ['attr', /[A-Za-z_:][\w:.-]*(?==)/y],
  ['plain', /\s+|[^<"'=>/\s]+|./y],
];

/** Splits `text` into coloured tokens by the file name's language; unknown languages give one plain token. */
export function tokenize(text: string, name: string): Token[] {
  const fam = familyOf(name);
  if (fam === 'none') return [{ kind: 'plain', text }];
  const rules = fam === 'markup' ? MARKUP : [...RULES[fam], ...COMMON];
  const out: Token[] = [];
  let pos = 0;
  while (pos < text.length) {
    for (const [kind, re] of rules) {
      re.lastIndex = pos;
      const m = re.exec(text);
      if (!m || m[0].length === 0) continue;
      let k = kind;
      if (k === 'plain' && fam !== 'markup' && KEYWORDS.has(fam === 'sql' ? m[0].toLowerCase() : m[0])) k = 'keyword';
      const last = out[out.length - 1];
      if (last && last.kind === k) last.text += m[0];
      else out.push({ kind: k, text: m[0] });
      pos += m[0].length;
      break;
    }
  }
  return out;
}
