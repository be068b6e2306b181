/**
 * The surface as markup (react-dom/server, no browser): app text stays text,
 * unknown nodes vanish, a select is choice buttons, a hidden `show_when` field
 * is not drawn, server refusals land at their fields, and the footer's roles.
 * The interactive side (clicks, the signature pad) is in test/e2e/apps-ui.test.ts.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { renderToStaticMarkup } from 'react-dom/server';
import { I18nContext, translator } from '../../i18n';
import { Surface } from './surface';
import { FileMarks } from '../file-marks';
import type { SurfaceData } from './types';

const html = (surface: SurfaceData, extra: Partial<Parameters<typeof Surface>[0]> = {}, lang: 'en' | 'tr' = 'en') =>
  renderToStaticMarkup(
    <I18nContext.Provider value={{ lang, t: translator(lang), setLang: () => {} }}>
      <Surface surface={surface} onEvent={() => {}} {...extra} />
    </I18nContext.Provider>,
  );

const surface: SurfaceData = {
  title: 'T',
  nodes: [
    { type: 'text', text: '<script>alert(1)</script>', style: 'title' },
    { type: 'html', html: '<b>bold</b>' } as never,
    {
      type: 'form',
      fields: [
        {
          key: 'mode',
          type: 'select',
          label: 'Mode',
          default: 'a',
          options: [
            { value: 'a', label: 'Alpha' },
            { value: 'b', label: 'Beta' },
          ],
        },
        { key: 'extra', type: 'string', label: 'Extra', show_when: { key: 'mode', equals: ['b'] } },
        { key: 'n', type: 'int', label: 'Count', required: true, min: 1 },
      ],
    },
    { type: 'row', children: [{ type: 'steps', steps: ['One', 'Two'], current: 1 }, { type: 'divider' }, { type: 'frame', src: 'x' } as never] },
  ],
  footer: [
    { id: 'ok', label: 'OK', primary: true },
    { id: 'drop', label: 'Drop', danger: true },
  ],
};

describe('surface markup', () => {
  test('app text is escaped; unknown nodes are dropped, also in rows', () => {
    const out = html(surface);
    assert.match(out, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(out, /<script|<b>|bold|<iframe|frame/);
    assert.match(out, /<h3 class="app-text title">/);
    assert.match(out, /<ol class="app-steps"><li class="done">One<\/li><li aria-current="step">Two<\/li><\/ol><hr\/>/);
  });

  test('a select is choice buttons, the default checked; a hidden show_when field is not drawn; required is marked', () => {
    const out = html(surface);
    assert.match(out, /role="radiogroup"/);
    assert.match(
      out,
      /<button type="button" role="radio" aria-checked="true">Alpha<\/button><button type="button" role="radio" aria-checked="false">Beta<\/button>/,
    );
    assert.doesNotMatch(out, /Extra/);
    assert.match(out, /Count<span class="req" aria-hidden="true"> \*<\/span>/);
    assert.match(out, /type="number"[^>]*aria-required="true"|aria-required="true"[^>]*type="number"/);
  });

  test("the server refusal is shown at its field, in the reader's language", () => {
    const out = html(surface, { errors: { n: 'required' }, error: 'Please fill in: n.' }, 'tr');
    assert.match(out, /<div class="app-field invalid">.*Count.*aria-invalid="true".*<p class="error" id="[^"]+-n-msg">Zorunlu<\/p>/);
    assert.match(out, /<p class="error" role="alert">Please fill in: n.<\/p>/);
    const reason = html(surface, { errors: { n: 'must be at least 1' } });
    assert.match(reason, /This value does not fit: must be at least 1/);
  });

  test('footer: the primary button submits, a danger one is red, busy disables them', () => {
    const out = html(surface, { busy: true });
    assert.match(out, /<button type="submit" disabled="" class="primary">OK<\/button><button type="button" disabled="" class="danger">Drop<\/button>/);
  });

  test('a locked row shows the app and the reason; app_state items as chips', () => {
    const out = renderToStaticMarkup(
      <I18nContext.Provider value={{ lang: 'en', t: translator('en'), setLang: () => {} }}>
        <FileMarks
          e={{
            id: 1,
            name: 'c.pdf',
            type: 'file',
            size: 1,
            modified: '2026-01-01T00:00:00Z',
            locked: true,
            lock: { plugin: 'sign', plugin_label: 'Fill and sign', reason: 'signing', reason_text: 'Out for signature', until: null },
            app_state: ['sign:sent', 'sign:<x>', 'a:b', 'a:c'],
          }}
        />
      </I18nContext.Provider>,
    );
    assert.match(out, /aria-label="Locked by Fill and sign: Out for signature"/);
    assert.match(out, /<span class="chip small" title="sign:sent">sent<\/span><span class="chip small" title="sign:&lt;x&gt;">&lt;x&gt;<\/span>/);
    assert.match(out, />\+1<\/span>/);
    assert.equal(renderToStaticMarkup(<FileMarks e={{ id: 2, name: 'x', type: 'file', size: 0, modified: '' }} />), '');
  });
});
