/**
 * Rendered Markdown for the preview pane and the assistant's answers, in its
 * own lazily loaded chunk (markdown-it is ~100 KB). Raw HTML in the text is
 * shown as text (html off) and links or images keep only relative, http(s)
 * or mailto addresses, so a `<script>`, an `onerror` attribute or a
 * `javascript:`/`data:` link never reaches the page as markup. The assistant
 * (`images: 'ours'`) shows an image only from this server or as a `data:`
 * image, so a model cannot make the browser fetch an outside address.
 */
import MarkdownIt from 'markdown-it';

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
  return md;
}

const renderers = { web: build('web'), ours: build('ours') };

export default function MarkdownView({ text, images = 'web' }: { text: string; images?: 'web' | 'ours' }) {
  return <article className="markdown" data-testid="markdown" dangerouslySetInnerHTML={{ __html: renderers[images].render(text) }} />;
}
