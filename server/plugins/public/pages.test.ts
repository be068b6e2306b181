import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sanitiseSurface } from '../surface/sanitise';
import { publicSurface } from './pages';

test('a public surface names exposed files by ref, inside rows too, and keeps no other path', () => {
  const refOf = new Map([['/Docs/a.pdf', 'f1']]);
  const s = publicSurface(
    sanitiseSurface({
      title: 't',
      open: { path: '/Docs/a.pdf' },
      nodes: [
        {
          type: 'row',
          children: [
            { type: 'pdf-fields', key: 'sig', path: '/Docs/a.pdf', fields: [{ key: 's', page: 1, kind: 'signature' }] },
            { type: 'preview', path: '/Other/b.pdf' },
          ],
        },
        { type: 'pdf-fields', key: 'x', path: '/Docs/secret.pdf', fields: [] },
        { type: 'list', items: [{ title: 'a', path: '/Docs/a.pdf' }, { title: 'b', path: '/Docs/b.txt', subtitle: 's' }, { title: 'c' }] },
        { type: 'text', text: '/Docs/a.pdf stays text' },
      ],
    }),
    refOf,
  );
  assert.deepEqual(s.nodes, [
    { type: 'row', children: [{ type: 'pdf-fields', key: 'sig', path: 'f1', fields: [{ key: 's', page: 1, kind: 'signature' }] }] },
    { type: 'list', items: [{ title: 'a', path: 'f1' }, { title: 'b', subtitle: 's' }, { title: 'c' }] },
    { type: 'text', text: '/Docs/a.pdf stays text' },
  ]);
  assert.equal('open' in s, false);
});
