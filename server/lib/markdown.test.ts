import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderMarkdown } from './markdown';

test('markdown: headings and links render; raw HTML and unsafe URLs do not survive', async () => {
  const html = await renderMarkdown(
    '# Title\n\n[ok](https://example.test/a) [rel](notes.md)\n\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n\n[js](javascript:alert(1)) [js2](JaVaScRiPt:alert(1)) [tab](java\tscript:alert(1)) ![d](data:image/png;base64,AAAA) [v](vbscript:x)',
  );
  assert.match(html, /<h1>Title<\/h1>/);
  assert.match(html, /<a href="https:\/\/example.test\/a">ok<\/a>/);
  assert.match(html, /<a href="notes.md">rel<\/a>/);
  assert.doesNotMatch(html, /<script|<img src=x|onerror=alert\(1\)>/i);
  assert.match(html, /&lt;script&gt;/);
  assert.doesNotMatch(html, /href="(javascript|vbscript)|src="data:/i);
});
