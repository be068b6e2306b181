/**
 * Markdown to HTML for previews that strangers and users read: raw HTML in
 * the source is shown as text (html off), and links or images are kept only
 * with a relative address or an http(s)/mailto scheme (no `javascript:`,
 * `data:`, `vbscript:`, `file:`…).
 */
import MarkdownIt from 'markdown-it';

const SAFE_URL = /^(https?:|mailto:|[^:]*$)/i;

const md = new MarkdownIt({ html: false, linkify: true });
// markdown-it lets `data:image/...` through by default; previews allow no inline data at all.
md.validateLink = (url: string) => SAFE_URL.test(url.trim().replace(/[\u0000-\u0020]/g, ''));

/** Sanitised HTML of `source` (safe to insert as element content). */
export function renderMarkdown(source: string): string {
  return md.render(source);
}

/** Whether a file name reads as Markdown. */
export const isMarkdownName = (name: string): boolean => /\.(md|markdown)$/i.test(name);
