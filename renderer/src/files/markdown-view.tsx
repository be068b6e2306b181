/**
 * Rendered Markdown for the preview pane, in its own lazily loaded chunk
 * (markdown-it is ~100 KB). Raw HTML in the file is shown as text (html off)
 * and links or images keep only relative, http(s) or mailto addresses, so a
 * `<script>`, an `onerror` attribute or a `javascript:`/`data:` link in a .md
 * file never reaches the page as markup.
 */
import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import MarkdownIt from 'markdown-it';
import MermaidView from './mermaid/mermaid-view';

const SAFE_URL = /^(https?:|mailto:|[^:]*$)/i;
const md = new MarkdownIt({ html: false, linkify: true });
md.validateLink = (url: string) => SAFE_URL.test(url.trim().replace(/[\u0000-\u0020]/g, ''));
// Links open outside the app, without handing it the opener.
md.renderer.rules.link_open = (tokens, i, opts, _env, self) => {
  tokens[i].attrSet('target', '_blank');
  tokens[i].attrSet('rel', 'noopener noreferrer');
  return self.renderToken(tokens, i, opts);
};

// A ```mermaid block becomes an empty slot; the component draws the diagram into it.
const fence = md.renderer.rules.fence!;
md.renderer.rules.fence = (tokens, i, opts, env, self) => {
  const diagrams = (env as { diagrams?: string[] } | undefined)?.diagrams;
  if (tokens[i].info.trim().split(/\s+/)[0] !== 'mermaid' || !diagrams) return fence(tokens, i, opts, env, self);
  diagrams.push(tokens[i].content);
  return '<div class="mermaid-slot"></div>\n';
};

export default function MarkdownView({ text }: { text: string }) {
  const { html, diagrams } = useMemo(() => {
    const env = { diagrams: [] as string[] };
    return { html: md.render(text, env), diagrams: env.diagrams };
  }, [text]);
  const article = useRef<HTMLElement>(null);
  const [slots, setSlots] = useState<Element[]>([]);
  useLayoutEffect(() => setSlots([...(article.current?.querySelectorAll('.mermaid-slot') ?? [])]), [html]);
  return (
    <>
      <article ref={article} className="markdown" data-testid="markdown" dangerouslySetInnerHTML={{ __html: html }} />
      {slots.map((slot, i) => diagrams[i] !== undefined && createPortal(<MermaidView text={diagrams[i]} />, slot, String(i)))}
    </>
  );
}
