/**
 * Markdown to HTML for previews that strangers and users read: raw HTML in
 * the source is shown as text (html off), and links or images are kept only
 * with a relative address or an http(s)/mailto scheme (no `javascript:`,
 * `data:`, `vbscript:`, `file:`…).
 */
import { lazy } from './lazy';

const SAFE_URL = /^(https?:|mailto:|[^:]*$)/i;

/** The parser loads with the first Markdown preview. */
const parser = lazy(async () => {
  const { default: MarkdownIt } = await import('markdown-it');
  const md = new MarkdownIt({ html: false, linkify: true });
  // markdown-it lets `data:image/...` through by default; previews allow no inline data at all.
  md.validateLink = (url: string) => SAFE_URL.test(url.trim().replace(/[\u0000-\u0020]/g, ''));
  return md;
});

/** Sanitised HTML of `source` (safe to insert as element content). */
export async function renderMarkdown(source: string): Promise<string> {
  return (await parser()).render(source);
}

/** Whether a file name reads as Markdown. */
export const isMarkdownName = (name: string): boolean => /\.(md|markdown)$/i.test(name);
