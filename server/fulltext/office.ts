/**
 * Office documents (OOXML: docx, xlsx, pptx; ODF: odt, ods, odp) are ZIPs of
 * XML: the text parts are read straight from the archive by ranges (the
 * archives module's reader, which refuses lying sizes and broken data) and
 * stripped to text. Bounded: parts whose declared size is past
 * MAX_PART_BYTES or whose compression ratio is past MAX_RATIO are refused,
 * at most MAX_XML_BYTES are inflated in all, and reading stops once the
 * sink is full.
 */
import { StringDecoder } from 'node:string_decoder';
import { MAX_RATIO, openZip, type ZipEntry } from '../archives';
import { MarkupText, type StripRules, type TextSink } from './markup';
import { ExtractError } from './errors';

/** Where the archive's bytes come from, by ranges. */
export type RangeSource = Parameters<typeof openZip>[0];

export type OfficeFormat = 'docx' | 'xlsx' | 'pptx' | 'odf';

/** One part's declared size at most (a 1,000-page Word body is ~20 MiB of XML). */
export const MAX_PART_BYTES = 128 * 1024 * 1024;
/** Inflated XML per document at most, all parts together. */
export const MAX_XML_BYTES = 256 * 1024 * 1024;
/** The ratio guard applies to parts bigger than this (tiny parts compress far better). */
const RATIO_MIN_BYTES = 1024 * 1024;

const set = (list: string) => new Set(list.split(' '));

interface Layout {
  /** The parts holding text, in reading order. */
  parts(names: string[]): string[];
  rules: StripRules;
}

/** `prefix<n>.xml` parts in page order (slide2 before slide10). */
const numbered = (names: string[], prefix: string) =>
  names
    .filter((n) => n.startsWith(prefix) && /^\d+\.xml$/.test(n.slice(prefix.length)))
    .sort((a, b) => parseInt(a.slice(prefix.length), 10) - parseInt(b.slice(prefix.length), 10));

const LAYOUTS: Record<OfficeFormat, Layout> = {
  docx: {
    parts: (names) => [
      ...(names.includes('word/document.xml') ? ['word/document.xml'] : []),
      ...['word/header', 'word/footer'].flatMap((p) => numbered(names, p)),
      ...['word/footnotes.xml', 'word/endnotes.xml', 'word/comments.xml'].filter((n) => names.includes(n)),
    ],
    // Only runs' text: field codes (w:instrText) and deleted text (w:delText) are not what the reader sees.
    rules: { breaks: set('w:p w:br w:cr'), spaces: set('w:tab w:tc'), keepOnly: set('w:t') },
  },
  xlsx: {
    // Cell text lives in the shared strings; a sheet's own <t> are inline strings (its <v> are numbers or indexes).
    parts: (names) => [...(names.includes('xl/sharedStrings.xml') ? ['xl/sharedStrings.xml'] : []), ...numbered(names, 'xl/worksheets/sheet')],
    rules: { breaks: set('si row'), spaces: set('c'), keepOnly: set('t') },
  },
  pptx: {
    parts: (names) => [...numbered(names, 'ppt/slides/slide'), ...numbered(names, 'ppt/notesSlides/notesSlide')],
    rules: { breaks: set('a:p a:br'), spaces: set('a:tab a:tc'), keepOnly: set('a:t') },
  },
  odf: {
    parts: (names) => names.filter((n) => n === 'content.xml'),
    rules: {
      breaks: set('text:p text:h text:line-break table:table-row draw:page'),
      spaces: set('text:tab text:s table:table-cell'),
      keepOnly: set('office:body'),
      // Tracked deletions and notes' citations are not the document's text.
      skip: set('text:tracked-changes text:note-citation'),
    },
  },
};

/** Reads the text of an office document into `sink`. A broken archive → ExtractError with the reader's reason. */
export async function officeText(format: OfficeFormat, source: RangeSource, sink: TextSink, signal: AbortSignal): Promise<void> {
  const zip = await openZip(source, { signal }).catch((e) => {
    throw ExtractError.from(e, 'not a readable ZIP archive');
  });
  try {
    const byName = new Map(zip.entries.map((e) => [e.name, e]));
    const layout = LAYOUTS[format];
    const wanted = layout.parts([...byName.keys()]).filter((n) => byName.has(n));
    if (wanted.length === 0) throw new ExtractError(`no text part in the archive (not a ${format} document)`);
    let budget = MAX_XML_BYTES;
    for (const name of wanted) {
      if (sink.full || budget <= 0) break;
      budget -= await partText(zip, byName.get(name)!, layout.rules, sink, budget);
    }
  } finally {
    zip.close();
  }
}

/** Strips one part into the sink; the bytes it inflated. */
async function partText(zip: Awaited<ReturnType<typeof openZip>>, e: ZipEntry, rules: StripRules, sink: TextSink, budget: number): Promise<number> {
  if (e.size > MAX_PART_BYTES) throw new ExtractError(`part ${e.name} declares ${e.size} bytes (limit ${MAX_PART_BYTES})`);
  if (e.size > RATIO_MIN_BYTES && e.size > e.compressed * MAX_RATIO) throw new ExtractError(`part ${e.name} is compressed more than ${MAX_RATIO}:1`);
  const stream = await zip.open(e).catch((err) => {
    throw ExtractError.from(err, `part ${e.name} cannot be read`);
  });
  const text = new MarkupText(rules, sink);
  const decoder = new StringDecoder('utf8');
  let read = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      read += chunk.length;
      text.push(decoder.write(chunk));
      if (sink.full || read >= budget) break;
    }
  } catch (err) {
    throw ExtractError.from(err, `part ${e.name} cannot be read`);
  } finally {
    stream.destroy();
  }
  text.push(decoder.end());
  sink.add('\n');
  return read;
}
