/**
 * "Update automatically" as markup (react-dom/server): the checkbox reflects the server's choice, is named
 * for its app, is described by the hint that says what still waits for the admin, and reads in Turkish too.
 * The click that sends it is in test/e2e/ui-app-store.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { renderToStaticMarkup } from 'react-dom/server';
import { I18nContext, translator } from '../i18n';
import { AutoUpdateToggle } from './store-auto-update';

const html = (on: boolean, lang: 'en' | 'tr' = 'en', busy = false) =>
  renderToStaticMarkup(
    <I18nContext.Provider value={{ lang, t: translator(lang), setLang: () => {} }}>
      <AutoUpdateToggle name="Images to PDF" on={on} busy={busy} onChange={() => {}} />
    </I18nContext.Provider>,
  );

describe('AutoUpdateToggle', () => {
  test('checked only when the app updates itself; disabled while the entry works', () => {
    assert.match(html(true), /<input type="checkbox"[^>]* checked=""/);
    assert.doesNotMatch(html(false), /checked=""/);
    assert.doesNotMatch(html(false), /disabled=""/);
    assert.match(html(false, 'en', true), /disabled=""/);
  });

  test('named for its app and described by the hint', () => {
    const m = html(false);
    assert.match(m, /aria-label="Update Images to PDF automatically"/);
    const id = /aria-describedby="([^"]+)"/.exec(m)?.[1];
    assert.ok(id);
    assert.match(m, new RegExp(`<p id="${id}"[^>]*>Newer versions install by themselves; a new major version or new permissions still wait for you.</p>`));
  });

  test('in Turkish', () => {
    assert.match(html(true, 'tr'), /Otomatik güncelle/);
    assert.match(html(true, 'tr'), /aria-label="Images to PDF uygulamasını otomatik güncelle"/);
  });
});
