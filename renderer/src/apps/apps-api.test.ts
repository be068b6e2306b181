import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { actionsFor, forgetActions, matchingRules, selectionKey } from './apps-api';
import { appRoute, parseAppRoute } from './app-route';

describe('app actions on the client', () => {
  test('one answer per selection for five minutes, whatever the order of the paths', async () => {
    const asked: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async (url: string) => {
      asked.push(url);
      return new Response(JSON.stringify({ actions: [], views: [] }), { status: 200, headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    try {
      forgetActions();
      const t0 = 1_000_000;
      await actionsFor(['/h/b.txt', '/h/a.txt'], t0);
      await actionsFor(['/h/a.txt', '/h/b.txt'], t0 + 60_000);
      assert.equal(asked.length, 1);
      assert.equal(asked[0], '/api/files/plugins/actions?path=%2Fh%2Fb.txt&path=%2Fh%2Fa.txt');
      await actionsFor(['/h/a.txt', '/h/b.txt'], t0 + 5 * 60_000 + 1);
      assert.equal(asked.length, 2, 'asked again after five minutes');
      await actionsFor(['/h/c.txt'], t0);
      assert.equal(asked.length, 3, 'another selection asks');
      forgetActions();
      await actionsFor(['/h/c.txt'], t0);
      assert.equal(asked.length, 4);
    } finally {
      globalThis.fetch = realFetch;
    }
    assert.equal(selectionKey(['b', 'a']), selectionKey(['a', 'b']));
  });

  test('open rules match by extension (any case) or type, type/* allowed', () => {
    const rules = [
      { plugin: 'sign', ext: ['pdf'], view: 'sign', label: { en: 'Sign' } },
      { plugin: 'img', mime: ['image/*'], action: 'resize', label: 'Resize' },
      { plugin: 'none', label: 'Never' },
    ];
    assert.deepEqual(
      matchingRules(rules, 'Contract.PDF').map((r) => r.plugin),
      ['sign'],
    );
    assert.deepEqual(
      matchingRules(rules, 'photo.jpg', 'image/jpeg').map((r) => r.plugin),
      ['img'],
    );
    assert.deepEqual(matchingRules(rules, 'notes.txt', 'text/plain'), []);
    assert.deepEqual(matchingRules(undefined, 'a.pdf'), []);
  });

  test('the page route of a view round-trips plugin, view and paths', () => {
    const r = appRoute('sign', 'form', ['/home/a b.pdf', '/home/c.pdf']);
    assert.equal(r, '/app/sign/form?path=%2Fhome%2Fa%20b.pdf&path=%2Fhome%2Fc.pdf');
    const [pathname, search] = r.split('?');
    assert.deepEqual(parseAppRoute(pathname, `?${search}`), { plugin: 'sign', view: 'form', paths: ['/home/a b.pdf', '/home/c.pdf'] });
    assert.equal(parseAppRoute('/files/home', ''), null);
  });
});
