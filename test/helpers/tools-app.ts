/**
 * The test app (“tools”): one action with a view (`greet`), one batch job over
 * N files (`upper`), and the misbehaving ones (`spin`: while(true); `hog`:
 * a 1 GiB allocation; `slow`: waits on the host for a cancel; `fails`: throws
 * one of its own text keys). Its views report what the host API let it do
 * (`probe` with `{users: [ids]}` in its section: what `users.get` answered).
 */
import { sampleManifest } from './app-package';

export const TOOLS_CODE = String.raw`
const nameOf = (p) => p.path.slice(p.path.lastIndexOf('/') + 1);
const tryCall = async (method, args) => { try { return { ok: await host.call(method, args) }; } catch (e) { return { code: e.code || 'error', message: e.message }; } };
app.view = async ({ view, paths, section }) => {
  if (view === 'greet') return {
    title: 'Greet',
    nodes: [
      { type: 'text', text: await host.call('i18n.t', { key: 'hello', params: { name: paths[0] ? paths[0].name : '?' } }) },
      { type: 'form', fields: [{ key: 'who', type: 'string', required: true }, { key: 'n', type: 'int', min: 1, max: 5 }] },
    ],
    footer: [{ id: 'go', label: 'Go', primary: true }],
    state: { step: 0 },
  };
  if (view === 'huge') {
    let deep = { type: 'text', text: 'bottom' };
    for (let i = 0; i < 50; i++) deep = { type: 'row', children: [deep] };
    const many = [];
    for (let i = 0; i < 10000; i++) many.push({ type: 'text', text: '<script>alert(' + i + ')</script>' });
    return { title: '<img src=x onerror=alert(1)>', nodes: [deep, { type: 'html', html: '<b>x</b>' }, ...many], footer: Array.from({ length: 20 }, (_, i) => ({ id: 'f' + i, label: 'F' + i })) };
  }
  if (view === 'spin') { while (true) {} }
  if (view === 'probe') {
    const q = JSON.parse(section || '{}');
    if (q.users) return { nodes: [{ type: 'text', text: JSON.stringify(await Promise.all(q.users.map((id) => tryCall('users.get', { id })))) }] };
    const out = {};
    out.secret = await tryCall('files.read', { path: q.secret });
    out.own = await tryCall('files.read', { path: q.own });
    out.kvSet = await tryCall('kv.set', { key: 'count', value: { n: 41 } });
    out.kvGet = await tryCall('kv.get', { key: 'count' });
    out.approved = await tryCall('http.fetch', { url: q.approved });
    out.unapproved = await tryCall('http.fetch', { url: q.unapproved });
    out.undeclared = await tryCall('http.fetch', { url: 'http://example.com/' });
    out.locks = await tryCall('locks.set', { path: q.own });
    out.progress = await tryCall('ops.progress', { fraction: 0.5 });
    out.create = await tryCall('ops.create', { action: 'upper', paths: [q.own], params: { suffix: 'more' } });
    return { nodes: [{ type: 'text', text: JSON.stringify(out) }] };
  }
  return { nodes: [] };
};
app.event = async ({ event, data, state }) => {
  if (event === 'submit') {
    if (data.who === 'nobody') return { errors: [{ key: 'who', code: 'invalid', reason: 'not a person' }] };
    return { surface: { nodes: [{ type: 'text', text: 'queued for ' + data.who }] }, job: { action: 'upper', params: { suffix: data.who } } };
  }
  const step = ((state && state.step) || 0) + 1;
  return { nodes: [{ type: 'text', text: event + ' ' + step }], state: { step } };
};
app.action = async ({ action, paths, params }) => {
  if (action === 'upper') {
    let i = 0, first = null;
    for (const p of paths) {
      const r = await host.call('files.read', { path: p.path });
      const out = p.path.replace(/\.txt$/, '.' + (params.suffix || 'up') + '.out');
      const w = await host.call('files.write', { path: out, data: r.data.toUpperCase() });
      first = first || w.path;
      await host.call('ops.progress', { fraction: ++i / paths.length, message: i + ' / ' + paths.length });
    }
    return { open: { path: first }, message: 'made ' + i };
  }
  if (action === 'spin') { while (true) {} }
  if (action === 'hog') return new ArrayBuffer(1024 * 1024 * 1024).byteLength;
  if (action === 'slow') { await host.call('http.fetch', { url: params.url }); return {}; }
  if (action === 'fails') throw new Error('err.broken');
  return null;
};
`;

export const TOOLS_PACKS = {
  en: {
    'a.greet': 'Greet',
    'a.upper': 'Upper-case',
    'a.spin': 'Spin',
    'a.hog': 'Hog',
    'a.slow': 'Slow',
    'a.fails': 'Fails',
    'a.admins': 'Admins only',
    'a.pdf': 'PDF only',
    'v.greet': 'Greeting',
    'v.huge': 'Huge',
    'v.spin': 'Spin',
    'v.probe': 'Probe',
    hello: 'Hello {name}',
    'err.broken': 'The tool broke',
  },
  tr: { 'a.upper': 'Büyük harf', hello: 'Merhaba {name}', 'err.broken': 'Araç bozuldu' },
};

export function toolsManifest(hosts: string[], over: Record<string, unknown> = {}) {
  const txt = { kind: 'file', ext: ['txt'] };
  const any = { kind: 'file' };
  return sampleManifest({
    id: 'tools',
    name: 'Tools',
    filex_range: '>=0.1.0',
    call_timeout_ms: 1000,
    permissions: ['files.read', 'files.write', 'storage', 'http', 'users.lookup', 'ops'],
    http_hosts: hosts,
    actions: [
      { id: 'greet', label: 'a.greet', applies: txt, view: 'greet', read_only_ok: true },
      { id: 'upper', label: 'a.upper', applies: { ...txt, multi: true }, output_mode: 'new_file' },
      { id: 'spin', label: 'a.spin', applies: any, read_only_ok: true },
      { id: 'hog', label: 'a.hog', applies: any, read_only_ok: true },
      { id: 'slow', label: 'a.slow', applies: any, read_only_ok: true },
      { id: 'fails', label: 'a.fails', applies: any, read_only_ok: true },
      { id: 'admins', label: 'a.admins', applies: any, min_role: 'admin', read_only_ok: true },
      { id: 'pdf', label: 'a.pdf', applies: { kind: 'file', ext: ['pdf'] }, read_only_ok: true },
    ],
    views: [
      { id: 'greet', label: 'v.greet', placement: 'dialog' },
      { id: 'huge', label: 'v.huge', placement: 'dialog' },
      { id: 'spin', label: 'v.spin', placement: 'dialog' },
      { id: 'probe', label: 'v.probe', placement: 'panel' },
    ],
    ...over,
  });
}
