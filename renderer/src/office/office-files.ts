/**
 * Office documents in the file manager (docs/docserver.md "Web UI"): which
 * files open in the document server's editor, and which preview as a PDF
 * rendition when no document server is configured. One small hook into the
 * file manager's open dispatch (`officeOpenTarget`), kept apart so other
 * openers (diagrams, text) stay independent of it.
 */
import { withQuery } from '../api/client';
import type { Capabilities, Entry } from '../api/types';
import { extOf } from '../lib/format';

/**
 * The spec's word / cell / slide lists (server/docserver DOC_GROUPS) without
 * the types the file manager already shows itself (txt, html, htm, xml, pdf,
 * csv): those keep their own previews and editor.
 */
const EDITOR_EXTS = new Set(
  [
    'doc docx docm dot dotx dotm odt ott rtf epub fodt mht xps wps',
    'xls xlsx xlsm xlt xltx xltm xlsb ods ots fods et ett',
    'ppt pptx pptm pot potx potm pps ppsx ppsm odp otp fodp dps dpt',
  ]
    .join(' ')
    .split(' '),
);

/** What LibreOffice turns into a PDF rendition (server/thumbs kinds' office list, csv left to the text preview). */
const PDF_EXTS = new Set('doc docx docm dot dotx odt ott rtf xls xlsx xlsm ods ots ppt pptx pps ppsx odp otp odg'.split(' '));

export type OfficeTarget = 'editor' | 'pdf' | null;

/** How an entry opens as an office document: in the editor (document server configured), as a PDF preview, or not at all. */
export function officeOpenTarget(e: Pick<Entry, 'name' | 'type'>, caps: Pick<Capabilities, 'external'> | null): OfficeTarget {
  if (e.type !== 'file') return null;
  const ext = extOf(e.name);
  if (caps?.external.docserver_url && EDITOR_EXTS.has(ext)) return 'editor';
  if (PDF_EXTS.has(ext)) return 'pdf';
  return null;
}

/** Whether the editor takes this file type (new documents open there when a document server is configured). */
export const isEditorType = (name: string) => EDITOR_EXTS.has(extOf(name));

/** The editor page of ours for `path` (a UI path). */
export const editorRoute = (path: string) => withQuery('/edit', { path });

/** The PDF rendition of an office document (`GET /api/files/pdf`). */
export const pdfUrl = (path: string) => withQuery('/api/files/pdf', { path });

/** The rendition's name: the document's own name with `.pdf` for its extension (what the server's Content-Disposition says). */
export const pdfName = (name: string) => name.replace(/\.[^.]*$/, '') + '.pdf';

/** The same rendition under a URL ending in its name, so the browser's PDF viewer shows and saves it as that. */
export const namedPdfUrl = (path: string, name: string) => withQuery(`/api/files/pdf/${encodeURIComponent(pdfName(name))}`, { path });
