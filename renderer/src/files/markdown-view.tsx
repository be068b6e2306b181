/**
 * Rendered Markdown for the preview pane, in its own lazily loaded chunk
 * (markdown-it is ~100 KB). Raw HTML in the file is shown as text (html off)
 * and links or images keep only relative, http(s) or mailto addresses, so a
 * `<script>`, an `onerror` attribute or a `javascript:`/`data:` link in a .md
 * file never reaches the page as markup.
 */
import MarkdownIt from 'markdown-it';

const SAFE_URL = /^(https?:|mailto:|[^:]*$)/i;
const md = new MarkdownIt({ html: false, linkify: true });
md.validateLink = (url: string) => SAFE_URL.test(url.trim().replace(/[\u0000-\u0020]/g, ''));
// Links open outside the app, without handing it the opener.
md.renderer.rules.link_open = (tokens, i, opts, _env, self) => {
  tokens[i].attrSet('target', '_blank');
  tokens[i].attrSet('rel', 'noopener noreferrer');
  return self.renderToken(tokens, i, opts);
};

export default function MarkdownView({ text }: { text: string }) {
  return <article className="markdown" data-testid="markdown" dangerouslySetInnerHTML={{ __html: md.render(text) }} />;
}
