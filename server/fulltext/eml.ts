/**
 * E-mail messages (.eml, message/rfc822) for search: From, To, Cc, Subject and Date, the text of the
 * body (text/plain as is, text/html stripped by markup.ts; quoted-printable and base64 decoded, charsets
 * through TextDecoder), nested multiparts and forwarded messages, and the names of attachments (never
 * their bodies). A small MIME reader, not a validator: at most MAX_EML_BYTES of the file are read, at most
 * MAX_PARTS parts visited, MAX_DEPTH levels deep; malformed structure (no closing boundary, no blank line
 * after the headers, a 10 MB line) just yields less text. Everything is scanned with indexOf over a
 * latin1 view of the bytes, so no input makes it slower than linear per level.
 */
import type { RangeSource } from './office';
import { HTML_RULES, MarkupText, type TextSink } from './markup';

/** Bytes of a message read at most (the text comes first; big attachments are what lies beyond). */
export const MAX_EML_BYTES = 8 * 1024 * 1024;
/** Parts visited at most, all levels together. */
export const MAX_PARTS = 200;
/** Multiparts and attached messages inside each other at most. */
export const MAX_DEPTH = 8;
/** The header fields worth finding a message by, as shown in the text. */
const SHOWN: [string, string][] = [
  ['from', 'From'],
  ['to', 'To'],
  ['cc', 'Cc'],
  ['subject', 'Subject'],
  ['date', 'Date'],
];

/** Reads the message into `sink`; whether a bound cut it (the file past MAX_EML_BYTES, or too many parts). */
export async function emlText(src: RangeSource, signal: AbortSignal, sink: TextSink): Promise<boolean> {
  const end = Math.min(src.size, MAX_EML_BYTES);
  const chunks: Buffer[] = [];
  for await (const chunk of await src.read({ start: 0, end: end - 1 }, signal)) chunks.push(chunk as Buffer);
  const reader = new MimeReader(sink);
  reader.message(Buffer.concat(chunks).toString('latin1'), 0);
  return src.size > MAX_EML_BYTES || reader.cut;
}

interface Part {
  headers: Map<string, string>;
  body: string;
}

class MimeReader {
  private parts = 0;
  /** Parts or levels were left unread. */
  cut = false;

  constructor(private sink: TextSink) {}

  /** A whole message: its shown headers, then its body. */
  message(raw: string, depth: number): void {
    const part = splitPart(raw);
    for (const [key, label] of SHOWN) {
      const v = part.headers.get(key);
      if (v) this.sink.add(`${label}: ${decodeHeader(v)}\n`);
    }
    this.part(part, depth);
  }

  private part(p: Part, depth: number, defaultType = 'text/plain'): void {
    if (this.sink.full) return;
    if (++this.parts > MAX_PARTS || depth > MAX_DEPTH) {
      this.cut = true;
      return;
    }
    const type = parseParams(p.headers.get('content-type') ?? defaultType);
    const disposition = parseParams(p.headers.get('content-disposition') ?? '');
    const name = disposition.params.get('filename') ?? type.params.get('name');
    const readable = type.value === 'text/plain' || type.value === 'text/html';
    if (disposition.value === 'attachment' || (name && !readable)) {
      if (name) this.sink.add(`Attachment: ${name}\n`);
      return;
    }
    if (type.value.startsWith('multipart/')) {
      const boundary = type.params.get('boundary');
      if (!boundary) return;
      const children = splitMultipart(p.body, boundary).map(splitPart);
      const childType = type.value === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
      // Alternatives say the same thing: the plain text one, else the first.
      const alternatives = type.value === 'multipart/alternative';
      const plain = children.find((c) => parseParams(c.headers.get('content-type') ?? childType).value === 'text/plain');
      for (const c of alternatives ? children.slice(0, 1).map((first) => plain ?? first) : children) this.part(c, depth + 1, childType);
      return;
    }
    if (type.value === 'message/rfc822') {
      this.message(transferDecode(p).toString('latin1'), depth + 1);
      return;
    }
    if (!readable) return;
    if (name) this.sink.add(`${name}\n`);
    const text = decodeCharset(transferDecode(p), type.params.get('charset'));
    if (type.value === 'text/html') new MarkupText(HTML_RULES, this.sink).push(text);
    else this.sink.add(text);
    this.sink.add('\n');
  }
}

/** Headers (unfolded, names lower-case, repeated ones joined) and the body after the first blank line. */
function splitPart(raw: string): Part {
  const { head, body } = headAndBody(raw);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const had = headers.get(key);
    headers.set(key, had ? `${had}, ${value}` : value);
  }
  return { headers, body };
}

/** Split at the first empty line: a part that starts with one has no headers; one without any is all headers. */
function headAndBody(raw: string): { head: string; body: string } {
  for (let line = 0; ; ) {
    const nl = raw.indexOf('\n', line);
    if (nl < 0) return { head: raw, body: '' };
    if (nl === line || (nl === line + 1 && raw[line] === '\r')) return { head: raw.slice(0, line), body: raw.slice(nl + 1) };
    line = nl + 1;
  }
}

/** The parts between `--boundary` lines, up to the closing `--boundary--` or the end (a missing close is common). */
export function splitMultipart(body: string, boundary: string): string[] {
  const delimiter = `--${boundary}`;
  const parts: string[] = [];
  let at = body.startsWith(delimiter) ? 0 : nextDelimiter(body, delimiter, 0);
  while (at >= 0 && parts.length < MAX_PARTS) {
    const after = at + delimiter.length;
    if (body.startsWith('--', after)) break;
    const lineEnd = body.indexOf('\n', after);
    if (lineEnd < 0) break;
    const next = nextDelimiter(body, delimiter, lineEnd);
    const end = next < 0 ? body.length : next - (body[next - 2] === '\r' ? 2 : 1);
    parts.push(body.slice(lineEnd + 1, Math.max(lineEnd + 1, end)));
    at = next;
  }
  return parts;
}

/** The next line that starts with the delimiter and goes on with `--`, blanks or its end (not a longer boundary). */
function nextDelimiter(body: string, delimiter: string, from: number): number {
  for (let i = body.indexOf(`\n${delimiter}`, from); i >= 0; i = body.indexOf(`\n${delimiter}`, i + 1)) {
    const c = body[i + 1 + delimiter.length];
    if (c === undefined || c === '-' || c === '\r' || c === '\n' || c === ' ' || c === '\t') return i + 1;
  }
  return -1;
}

/** The part's body bytes, base64 or quoted-printable decoded. */
function transferDecode(p: Part): Buffer {
  const encoding = (p.headers.get('content-transfer-encoding') ?? '').trim().toLowerCase();
  if (encoding === 'base64') return Buffer.from(p.body, 'base64');
  if (encoding === 'quoted-printable') return Buffer.from(decodeQuotedPrintable(p.body), 'latin1');
  return Buffer.from(p.body, 'latin1');
}

const decodeQuotedPrintable = (s: string): string =>
  s.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** Bytes as text in the named charset; unknown or absent: UTF-8 when they are valid UTF-8, else Windows-1252. */
export function decodeCharset(bytes: Buffer, charset: string | undefined): string {
  if (charset) {
    try {
      return new TextDecoder(charset.trim()).decode(bytes);
    } catch {
      /* a label TextDecoder does not know: guess below */
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

const ENCODED_WORD = /=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=/g;

/** A header's value as text: raw 8-bit bytes (RFC 6532) guessed, RFC 2047 encoded words decoded, blanks between them dropped. */
export function decodeHeader(value: string): string {
  const raw = /[\x80-\xff]/.test(value) ? decodeCharset(Buffer.from(value, 'latin1'), undefined) : value;
  return raw.replace(/(\?=)\s+(?==\?)/g, '$1').replace(ENCODED_WORD, (_m, charset: string, enc: string, text: string) => {
    const bytes = enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : Buffer.from(decodeQuotedPrintable(text.replace(/_/g, ' ')), 'latin1');
    // RFC 2231 lets a language follow the charset: utf-8*en.
    return decodeCharset(bytes, charset.split('*')[0]);
  });
}

/**
 * `type/subtype; a=b; c="d"` as the lower-case value and its parameters, RFC 2231 continuations
 * (`name*0*=utf-8''%C3%A7; name*1*=...`) joined and decoded, encoded words in quoted values decoded.
 */
export function parseParams(header: string): { value: string; params: Map<string, string> } {
  const [value, ...rest] = splitOutsideQuotes(header);
  const params = new Map<string, string>();
  const continued = new Map<string, { index: number; text: string; extended: boolean }[]>();
  for (const item of rest) {
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    const key = item.slice(0, eq).trim().toLowerCase();
    let v = item.slice(eq + 1).trim();
    if (v.startsWith('"')) v = v.slice(1, v.endsWith('"') && v.length > 1 ? -1 : undefined).replace(/\\(.)/g, '$1');
    const m = /^([^*]+)\*(?:(\d+)\*?)?$/.exec(key);
    if (!m) {
      params.set(key, decodeHeader(v));
      continue;
    }
    const segments = continued.get(m[1]) ?? [];
    segments.push({ index: Number(m[2] ?? 0), text: v, extended: key.endsWith('*') });
    continued.set(m[1], segments);
  }
  for (const [key, segments] of continued) {
    segments.sort((a, b) => a.index - b.index);
    // The first extended segment names the charset: charset'language'text.
    const first = segments[0].extended ? /^([^']*)'[^']*'(.*)$/.exec(segments[0].text) : null;
    if (first) segments[0] = { ...segments[0], text: first[2] };
    const bytes = Buffer.concat(segments.map((s) => (s.extended ? percentDecoded(s.text) : Buffer.from(s.text, 'latin1'))));
    params.set(key, decodeCharset(bytes, first?.[1] || undefined));
  }
  return { value: (value ?? '').trim().toLowerCase(), params };
}

const percentDecoded = (s: string): Buffer =>
  Buffer.from(
    s.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );

/** Splits at `;` outside double quotes. */
function splitOutsideQuotes(s: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ';' && !quoted) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}
