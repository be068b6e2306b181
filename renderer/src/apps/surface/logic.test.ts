import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { collectValues, fieldErrorsOf, hints, holds, initialValues, inputs, isRequired, isShown, knownNodes, pickLabel } from './logic';
import type { SurfaceData } from './types';

const surface: SurfaceData = {
  nodes: [
    { type: 'text', text: 'Hi' },
    {
      type: 'form',
      fields: [
        { key: 'mode', type: 'select', options: [{ value: 'mail' }, { value: 'link' }], default: 'link' },
        { key: 'email', type: 'string', show_when: { key: 'mode', equals: ['mail'] }, required: true },
        { key: 'note', type: 'text', required_when: { key: 'mode', equals: ['link'] }, max_length: 5 },
        { key: 'copies', type: 'int', min: 1, max: 3 },
        { key: 'urgent', type: 'bool' },
      ],
    },
    { type: 'row', children: [{ type: 'signature-pad', key: 'sig', required: true }, { type: 'html', html: '<b>x</b>' } as never] },
  ],
  footer: [{ id: 'go', label: 'Go', primary: true }],
};

describe('surface logic', () => {
  test('show_when and required_when follow the other field, as text', () => {
    const [, form] = surface.nodes as [unknown, { fields: never[] }];
    const [, email, note] = form.fields as Array<Parameters<typeof isShown>[0]>;
    assert.equal(isShown(email, { mode: 'link' }), false);
    assert.equal(isShown(email, { mode: 'mail' }), true);
    assert.equal(isRequired(email, { mode: 'link' }), false, 'a hidden field is never required');
    assert.equal(isRequired(email, { mode: 'mail' }), true);
    assert.equal(isRequired(note, { mode: 'link' }), true);
    assert.equal(isRequired(note, { mode: 'mail' }), false);
    assert.equal(holds({ key: 'n', equals: ['2'] }, { n: 2 }), true);
    assert.equal(holds({ key: 'n', equals: [''] }, {}), true, 'an unset value reads as empty text');
    assert.equal(holds(undefined, {}), false);
  });

  test('unknown nodes are dropped, also inside rows; inputs are found in rows', () => {
    const nodes = knownNodes([...surface.nodes, { type: 'script', text: 'x' }, null, 'text']);
    assert.equal(nodes.length, 3);
    const row = nodes[2] as { children: unknown[] };
    assert.equal(row.children.length, 1);
    assert.deepEqual(
      inputs(nodes).map((i) => i.key),
      ['mode', 'email', 'note', 'copies', 'urgent', 'sig'],
    );
  });

  test('initial values come from defaults; a flag starts false', () => {
    assert.deepEqual(initialValues(surface), { mode: 'link', urgent: false });
  });

  test('a submit sends shown, non-empty values, whole numbers as numbers', () => {
    const values = { mode: 'link', email: 'a@b.c', note: '', copies: '2', urgent: true, sig: 'data:image/png;base64,xx' };
    assert.deepEqual(collectValues(surface, values), { mode: 'link', copies: 2, urgent: true, sig: 'data:image/png;base64,xx' });
    assert.deepEqual(collectValues(surface, { ...values, mode: 'mail', copies: '2.5' }), {
      mode: 'mail',
      email: 'a@b.c',
      copies: '2.5',
      urgent: true,
      sig: 'data:image/png;base64,xx',
    });
  });

  test('hints: required (also by required_when and for widgets), min, max, whole numbers, length', () => {
    assert.deepEqual(hints(surface, { mode: 'link', copies: '0' }), { note: { code: 'required' }, copies: { code: 'min', n: 1 }, sig: { code: 'required' } });
    assert.deepEqual(hints(surface, { mode: 'mail', copies: 9, note: 'toolong', sig: 'x' }), {
      email: { code: 'required' },
      note: { code: 'max_length', n: 5 },
      copies: { code: 'max', n: 3 },
    });
    assert.deepEqual(hints(surface, { mode: 'mail', email: 'x', copies: 'two', sig: 'x' }), { copies: { code: 'int' } });
  });

  test('the server refusal maps to fields; other failures map to none', () => {
    assert.deepEqual(fieldErrorsOf({ status: 422, code: 'required', details: { fields: ['a', 'b'], reasons: { a: 'required' } } }), {
      a: 'required',
      b: 'required',
    });
    assert.deepEqual(fieldErrorsOf({ status: 422, code: 'invalid', details: { fields: ['n'], reasons: { n: 'must be at most 5' } } }), {
      n: 'must be at most 5',
    });
    assert.deepEqual(fieldErrorsOf({ status: 400, code: 'validation_failed', details: { fields: ['a'] } }), {});
    assert.deepEqual(fieldErrorsOf(null), {});
  });

  test("labels in the reader's language, then English, then any", () => {
    assert.equal(pickLabel({ en: 'Sign', tr: 'İmzala' }, 'tr'), 'İmzala');
    assert.equal(pickLabel({ en: 'Sign' }, 'tr'), 'Sign');
    assert.equal(pickLabel({ de: 'Zeichnen' }, 'tr'), 'Zeichnen');
    assert.equal(pickLabel(null, 'en'), '');
  });
});
