import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DrawioSession, editorUrl, type DiagramWrite } from './drawio-session';
import { diagramFormat } from './diagram-route';

const ORIGIN = 'http://127.0.0.1:9000';
const frame = {};

function session(format: 'xml' | 'xmlsvg' | 'xmlpng', content = '<mxfile/>', autosaveMs = 20) {
  const posted: Record<string, unknown>[] = [];
  const writes: DiagramWrite[] = [];
  const statuses: unknown[] = [];
  let exited = 0;
  const s = new DrawioSession({
    origin: ORIGIN,
    format,
    title: 'a.drawio',
    content,
    autosaveMs,
    io: { post: (m) => posted.push(m), write: async (w) => void writes.push(w), exit: () => exited++, status: (x) => statuses.push(x) },
  });
  const send = (msg: unknown, origin = ORIGIN, source: unknown = frame) => s.handle({ origin, source, data: JSON.stringify(msg) }, frame);
  return { s, posted, writes, statuses, send, exited: () => exited };
}
const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe('draw.io embed session', () => {
  test('file names and the embed URL', () => {
    assert.equal(diagramFormat('A.drawio'), 'xml');
    assert.equal(diagramFormat('a.drawio.svg'), 'xmlsvg');
    assert.equal(diagramFormat('a.DRAWIO.PNG'), 'xmlpng');
    assert.equal(diagramFormat('a.svg'), null);
    assert.equal(diagramFormat('drawio'), null);
    const u = new URL(editorUrl('https://draw.example/app/?ui=min', 'tr'));
    assert.deepEqual(Object.fromEntries(u.searchParams), { ui: 'min', embed: '1', proto: 'json', spin: '1', libraries: '1', saveAndExit: '1', lang: 'tr' });
    assert.equal(u.pathname, '/app/');
  });

  test('init gets the diagram; a PNG goes as xmlpng', () => {
    const x = session('xml', '<mxfile>x</mxfile>');
    x.send({ event: 'init' });
    assert.equal(x.posted[0].action, 'load');
    assert.equal(x.posted[0].xml, '<mxfile>x</mxfile>');
    assert.equal(x.posted[0].autosave, 1);
    const p = session('xmlpng', 'data:image/png;base64,AAAA');
    p.send({ event: 'init' });
    assert.equal(p.posted[0].xmlpng, 'data:image/png;base64,AAAA');
    assert.equal(p.posted[0].xml, undefined);
  });

  test('messages from another origin or another window are ignored', async () => {
    const x = session('xml');
    assert.equal(x.send({ event: 'save', xml: 'forged' }, 'http://evil.example'), false);
    assert.equal(x.send({ event: 'save', xml: 'forged' }, ORIGIN, {}), false);
    assert.equal(x.send({ event: 'exit' }, 'null'), false);
    assert.equal(x.s.handle({ origin: ORIGIN, source: frame, data: { event: 'save', xml: 'object, not JSON text' } }, frame), false);
    await tick(40);
    assert.deepEqual(x.writes, []);
    assert.equal(x.exited(), 0);
  });

  test('autosaves are coalesced, save writes at once, exit writes what is pending first', async () => {
    const x = session('xml', '', 30);
    x.send({ event: 'autosave', xml: 'a1' });
    x.send({ event: 'autosave', xml: 'a2' });
    assert.deepEqual(x.writes, []);
    await tick(60);
    assert.deepEqual(x.writes, [{ text: 'a2' }]);
    x.send({ event: 'save', xml: 's1' });
    await tick();
    assert.deepEqual(x.writes.at(-1), { text: 's1' });
    assert.equal(x.posted.at(-1)?.action, 'status');
    x.send({ event: 'autosave', xml: 'a3' });
    x.send({ event: 'exit', modified: true });
    await tick();
    assert.deepEqual(x.writes.at(-1), { text: 'a3' });
    assert.equal(x.exited(), 1);
  });

  test('an image format is written from the editor export', async () => {
    const x = session('xmlsvg');
    x.send({ event: 'save', xml: '<mxfile>v2</mxfile>' });
    await tick();
    assert.deepEqual(x.posted.at(-1), { action: 'export', format: 'xmlsvg', xml: '<mxfile>v2</mxfile>', spinKey: 'saving' });
    const svg = '<svg content="v2"/>';
    x.send({ event: 'export', format: 'xmlsvg', data: 'data:image/svg+xml;base64,' + Buffer.from(svg).toString('base64'), xml: '<mxfile>v2</mxfile>' });
    await tick();
    assert.deepEqual(x.writes, [{ text: svg }]);
    assert.equal(x.statuses.at(-1), 'saved');
    const p = session('xmlpng');
    p.send({ event: 'save', xml: 'x' });
    await tick();
    p.send({ event: 'export', format: 'xmlpng', data: 'data:image/png;base64,iVBORw==' });
    await tick();
    assert.deepEqual(p.writes, [{ bytes: Uint8Array.from([0x89, 0x50, 0x4e, 0x47]) }]);
  });
});
