import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measure, sanitiseSurface, SURFACE_LIMITS } from './sanitise';
import { checkSubmission } from './validate';
import { AppError } from '../../errors';

test('10,000 nodes are cut to 500, depth 50 to 8, footer to 8 actions', () => {
  const many = sanitiseSurface({ nodes: Array.from({ length: 10_000 }, (_, i) => ({ type: 'text', text: `n${i}` })) });
  assert.equal(measure(many.nodes).nodes, SURFACE_LIMITS.nodes);
  assert.equal(many.nodes[499].text as string, 'n499');
  let deep: unknown = { type: 'text', text: 'bottom' };
  for (let i = 0; i < 50; i++) deep = { type: 'row', children: [deep, { type: 'divider' }] };
  const d = sanitiseSurface({ nodes: [deep] });
  const m = measure(d.nodes);
  assert.equal(m.depth, SURFACE_LIMITS.depth);
  assert.ok(m.nodes <= 2 * SURFACE_LIMITS.depth, `${m.nodes} nodes`);
  const footer = sanitiseSurface({ footer: Array.from({ length: 20 }, (_, i) => ({ id: `a${i}`, label: 'x' })) }).footer;
  assert.equal(footer.length, 8);
  // Rows count towards the 500 too: a wide tree of rows is cut as well.
  const wide = sanitiseSurface({
    nodes: Array.from({ length: 100 }, () => ({ type: 'row', children: Array.from({ length: 100 }, () => ({ type: 'divider' })) })),
  });
  assert.equal(measure(wide.nodes).nodes, 500);
});

test('unknown nodes and properties are dropped; script in labels stays plain text; strings are capped', () => {
  const s = sanitiseSurface({
    title: '<script>alert(1)</script>',
    nodes: [
      { type: 'html', html: '<img src=x onerror=alert(1)>' },
      { type: 'text', text: '<script>alert(1)</script>', onclick: 'alert(1)', dangerouslySetInnerHTML: { __html: 'x' } },
      { type: 'text', text: 'a\u0000b\u001bc\nd' },
      { type: 'text', text: 'x'.repeat(10_000) },
      { type: 'text' }, // missing what it needs
      {
        type: 'form',
        fields: [
          { key: 'name', type: 'string', label: '<b>Name</b>', required: true },
          { key: 'x', type: 'file' },
          { key: 'c', type: 'select', options: [{ value: 'a', label: 'A' }] },
        ],
      },
      { type: 'row', children: [{ type: 'divider', style: 'evil' }, { type: 'marquee' }] },
      'not a node',
      null,
      42,
    ],
    footer: [
      { id: 'ok', label: 'OK', primary: true, onclick: 'x' },
      { id: 'bad id!', label: 'x' },
    ],
    state: { step: 2 },
    extra: 'dropped',
  });
  assert.equal(s.title, '<script>alert(1)</script>'); // text, for the UI to escape
  assert.deepEqual(s.nodes[0], { type: 'text', text: '<script>alert(1)</script>' });
  assert.equal(s.nodes[1].text as string, 'abc\nd');
  assert.equal(Buffer.byteLength(s.nodes[2].text as string), SURFACE_LIMITS.text_bytes);
  assert.deepEqual(s.nodes[3], {
    type: 'form',
    fields: [
      { key: 'name', type: 'string', label: '<b>Name</b>', required: true },
      { key: 'c', type: 'select', options: [{ value: 'a', label: 'A' }] },
    ],
  });
  assert.deepEqual(s.nodes[4], { type: 'row', children: [{ type: 'divider' }] });
  assert.equal(s.nodes.length, 5);
  assert.deepEqual(s.footer, [{ id: 'ok', label: 'OK', primary: true }]);
  assert.deepEqual(s.state, { step: 2 });
  assert.equal('extra' in s, false);
  assert.deepEqual(sanitiseSurface('nope'), { nodes: [], footer: [] });
});

test('every node of the catalogue survives with its own properties', () => {
  const nodes = [
    { type: 'text', text: 't', style: 'title' },
    { type: 'form', fields: [{ key: 'd', type: 'date' }] },
    { type: 'steps', steps: ['a', 'b'], current: 1 },
    { type: 'list', items: [{ title: 'x', subtitle: 'y' }] },
    { type: 'progress', value: 0.5, label: 'half' },
    { type: 'people-picker', key: 'who', multi: true },
    { type: 'pin-input', key: 'pin', length: 6 },
    { type: 'file-chooser', key: 'f', ext: ['pdf'] },
    { type: 'pdf-fields', path: '/s/a.pdf', fields: [{ key: 'sig', page: 1, x: 1, y: 2, w: 3, h: 4, kind: 'signature' }] },
    { type: 'signature-pad', key: 'sig' },
    { type: 'preview', path: '/s/a.pdf' },
    { type: 'divider' },
    { type: 'row', children: [] },
  ];
  assert.deepEqual(sanitiseSurface({ nodes }).nodes, nodes);
});

test('a submission is checked against the fields shown: required, required_when, show_when, types', () => {
  const fields = new Map<string, Record<string, unknown>>([
    ['name', { key: 'name', type: 'string', required: true }],
    ['age', { key: 'age', type: 'int', min: 0, max: 150 }],
    ['kind', { key: 'kind', type: 'select', options: [{ value: 'a' }, { value: 'b' }] }],
    ['why', { key: 'why', type: 'text', required_when: { key: 'kind', equals: ['b'] } }],
    ['hidden', { key: 'hidden', type: 'string', required: true, show_when: { key: 'kind', equals: ['a'] } }],
  ]);
  const fails = (data: Record<string, unknown>) => {
    try {
      checkSubmission(fields, data);
      return null;
    } catch (e) {
      assert.ok(e instanceof AppError);
      return { code: e.code, fields: e.details!.fields };
    }
  };
  assert.deepEqual(fails({ kind: 'b', name: 'x' }), { code: 'required', fields: ['why'] });
  assert.deepEqual(fails({ kind: 'a' }), { code: 'required', fields: ['name', 'hidden'] });
  assert.deepEqual(fails({ name: 'x', age: 200, kind: 'c' }), { code: 'invalid', fields: ['age', 'kind'] });
  assert.equal(fails({ name: 'x', age: 3, kind: 'b', why: 'because' }), null);
});
