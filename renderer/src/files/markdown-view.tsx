/**
 * Rendered Markdown for the preview pane and the assistant's answers, in its
 * own lazily loaded chunk (markdown-it is ~100 KB). Raw HTML in the text is
 * shown as text (html off) and links or images keep only relative, http(s)
 * or mailto addresses, so a `<script>`, an `onerror` attribute or a
 * `javascript:`/`data:` link never reaches the page as markup. The assistant
 * (`images: 'ours'`) shows an image only from this server or as a `data:`
 * image, so a model cannot make the browser fetch an outside address.
 * ```mermaid blocks are drawn in a sandboxed frame (MermaidView).
 */
import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import MarkdownIt from 'markdown-it';
import MermaidView from './mermaid/mermaid-view';

const SAFE_URL = /^(https?:|mailto:|[^:]*$)/i;
const DATA_IMAGE = /^data:image\/(png|gif|jpeg|webp);base64,/i;
const clean = (url: string) => url.trim().replace(/[\u0000-\u0020]/g, '');

/** True for a relative address or one on this page's origin (never protocol-relative `//host`). */
function ours(url: string): boolean {
  if (url.startsWith('//')) return false;
  try {
    return new URL(url, location.href).origin === location.origin;
  } catch {
    return false;
  }
}

function build(images: 'web' | 'ours') {
  const md = new MarkdownIt({ html: false, linkify: true });
  md.validateLink = (url: string) => SAFE_URL.test(clean(url)) || (images === 'ours' && DATA_IMAGE.test(clean(url)));
  // Links open outside the app, without handing it the opener; a data: address is never a link.
  md.renderer.rules.link_open = (tokens, i, opts, _env, self) => {
    if (/^data:/i.test(clean(String(tokens[i].attrGet('href') ?? '')))) tokens[i].attrSet('href', '#');
    tokens[i].attrSet('target', '_blank');
    tokens[i].attrSet('rel', 'noopener noreferrer');
    return self.renderToken(tokens, i, opts);
  };
  if (images === 'ours') {
    const image = md.renderer.rules.image!;
    md.renderer.rules.image = (tokens, i, opts, env, self) => {
      const src = clean(String(tokens[i].attrGet('src') ?? ''));
      if (DATA_IMAGE.test(src) || ours(src)) return image(tokens, i, opts, env, self);
      return md.utils.escapeHtml(tokens[i].content || src);
    };
  }
  // A ```mermaid block becomes an empty slot; the component draws the diagram into it.
  const fence = md.renderer.rules.fence!;
  md.renderer.rules.fence = (tokens, i, opts, env, self) => {
    const diagrams = (env as { diagrams?: string[] } | undefined)?.diagrams;
    if (tokens[i].info.trim().split(/\s+/)[0] !== 'mermaid' || !diagrams) return fence(tokens, i, opts, env, self);
    diagrams.push(tokens[i].content);
    return '<div class="mermaid-slot"></div>\n';
  };
  return md;
}

const renderers = { web: build('web'), ours: build('ours') };

export default function MarkdownView({ text, images = 'web' }: { text: string; images?: 'web' | 'ours' }) {
  const { html, diagrams } = useMemo(() => {
    const env = { diagrams: [] as string[] };
    return { html: renderers[images].render(text, env), diagrams: env.diagrams };
  }, [text, images]);
  const article = useRef<HTMLElement>(null);
  const [slots, setSlots] = useState<Element[]>([]);
  useLayoutEffect(() => setSlots([...(article.current?.querySelectorAll('.mermaid-slot') ?? [])]), [html]);
  return (
    <>
      {/* biome-ignore lint/security/noDangerouslySetInnerHtml: markdown-it with html off escapes raw HTML; links and images are filtered to relative and http(s) */}
      <article ref={article} className="markdown" data-testid="markdown" dangerouslySetInnerHTML={{ __html: html }} />
      {slots.map((slot, i) => diagrams[i] !== undefined && createPortal(<MermaidView text={diagrams[i]} />, slot, String(i)))}
    </>
  );
}
