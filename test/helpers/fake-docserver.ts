/**
 * A protocol-faithful fake document server on loopback (no real one can run
 * here), speaking the parts of the ONLYOFFICE Docs protocol the service uses:
 *   - `GET /healthcheck` → `true`; `GET /web-apps/apps/api/documents/api.js`
 *     (defines `DocsAPI.DocEditor.version()`, and `new DocsAPI.DocEditor(id,
 *     config)`, which replaces the placeholder with a frame of the editor app,
 *     as the real script does);
 *   - the editor app in that frame (`/web-apps/apps/documenteditor/main/index.html`):
 *     the server side verifies the config's token, fetches the document from
 *     the signed URL and sends callback status 1 (a user connected); the page
 *     shows what it loaded and, in edit mode, a text field and Save, which
 *     appends the text to the bytes ("edits"), serves that revision and sends
 *     status 2 (`saved` records each save and the service's answer);
 *   - opening an editor: the config's HS256 token is verified with the
 *     shared secret (as the real server does), then the document is fetched
 *     from the config's signed `document.url`;
 *   - saving: the "edited" revision is served from `/cache/files/<id>/output.<ext>`
 *     and the callback is POSTed to the config's `callbackUrl` with a real
 *     HS256 JWT whose payload is the callback body (in the body's `token`, or
 *     in `Authorization: Bearer` with the body nested under `payload`);
 *   - `POST /ConvertService.ashx` (the Test button's probe): verifies the
 *     token (`{error: -8}` when it does not hold), downloads `url`
 *     (`{error: -4}` when that fails) and answers `{endConvert, fileUrl, percent}`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { SignJWT, jwtVerify } from 'jose';

export interface EditorSession {
  key: string;
  callbackUrl: string;
  fileType: string;
  /** The bytes the editor loaded. */
  bytes: Buffer;
  config: Record<string, any>;
}

export interface CallbackOptions {
  /** Default: a new revision is served for 2 and 6, none for others. */
  url?: string;
  lastsave?: Date;
  /** Where the JWT travels: the body's `token` (default) or the Authorization header. */
  via?: 'body' | 'header';
  /** Sign with another secret. */
  secret?: string;
  /** `none`: an unsigned token. */
  alg?: 'HS256' | 'none';
  /** Seconds from now (negative: already expired). */
  expiresIn?: number;
  /** Override the key (a callback for another node). */
  key?: string;
  /** The callback URL to POST to (default the session's). */
  callbackUrl?: string;
}

const enc = (s: string) => new TextEncoder().encode(s);
const esc = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title: string, body: string) => `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head><body>${body}</body></html>`;
const EDITOR_APP = '/web-apps/apps/documenteditor/main/index.html';

/** The browser script: like the real api.js, DocEditor swaps the placeholder for a frame of the editor app. */
const apiJs = (origin: string) => `window.DocsAPI = {
  DocEditor: function (id, config) {
    var el = document.getElementById(id);
    var frame = document.createElement('iframe');
    frame.name = 'frameEditor';
    frame.title = 'Document editor';
    frame.src = ${JSON.stringify(origin + EDITOR_APP)} + '?config=' + encodeURIComponent(JSON.stringify(config));
    frame.style.width = config.width || '100%';
    frame.style.height = config.height || '100%';
    frame.style.border = '0';
    el.parentNode.replaceChild(frame, el);
    this.destroyEditor = function () { frame.remove(); };
  }
};
DocsAPI.DocEditor.version = function () { return '8.2.1-fake'; };
`;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

export class FakeDocserver {
  url = '';
  /** Whether the conversion service really fetches the probe URL (false: answers a download error without trying). */
  fetchProbe = true;
  /** Conversion requests received (the Test button's probe). */
  conversions: Array<{ url: string; ok: boolean }> = [];
  /** Editors opened by browsers through api.js (session id → session). */
  sessions = new Map<string, EditorSession>();
  /** Saves made from the browser's editor frame, with the service's answer to the callback. */
  saved: Array<{ bytes: Buffer; status: number; body: unknown }> = [];
  private server!: Server;
  private files = new Map<string, { bytes?: Buffer; size?: number; chunked?: boolean }>();
  private seq = 0;

  constructor(public secret: string) {}

  async start(): Promise<this> {
    this.server = createServer(
      (req, res) =>
        void this.handle(req, res).catch((e) => {
          res.statusCode = 500;
          res.end(String(e));
        }),
    );
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', this.url).pathname;
    if (path === '/healthcheck') return void res.end('true');
    if (path === '/web-apps/apps/api/documents/api.js') {
      res.setHeader('content-type', 'application/javascript');
      return void res.end(apiJs(this.url));
    }
    if (path === EDITOR_APP && req.method === 'GET') return this.editorPage(req, res);
    if (path === '/editor/save' && req.method === 'POST') return this.editorSave(req, res);
    const f = this.files.get(path);
    if (f && req.method === 'GET') {
      if (f.bytes && f.chunked) {
        // No length declared: the service must count while it reads.
        for (let i = 0; i < f.bytes.length; i += 65536) res.write(f.bytes.subarray(i, i + 65536));
        return void res.end();
      }
      if (f.bytes) {
        res.setHeader('content-length', String(f.bytes.length));
        return void res.end(f.bytes);
      }
      // A huge revision: declared, streamed lazily (the service must refuse it from its length).
      res.setHeader('content-length', String(f.size));
      const chunk = Buffer.alloc(1 << 20);
      let sent = 0;
      const pump = () => {
        while (sent < f.size! && res.write(chunk)) sent += chunk.length;
        if (sent >= f.size!) res.end();
      };
      res.on('drain', pump);
      res.on('close', () => res.off('drain', pump));
      return pump();
    }
    if (path === '/ConvertService.ashx' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      res.setHeader('content-type', 'application/json');
      try {
        // Body form: the request itself; header form: the request under `payload`.
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        const { payload } = await jwtVerify(body.token ?? '', enc(this.secret), { algorithms: ['HS256'] });
        if (payload.url !== body.url) throw new Error('the token does not sign this request');
        if (bearer && ((await jwtVerify(bearer, enc(this.secret), { algorithms: ['HS256'] })).payload as any).payload?.url !== body.url)
          throw new Error('header token');
      } catch {
        return void res.end(JSON.stringify({ error: -8 }));
      }
      let ok = false;
      if (this.fetchProbe) {
        const r = await fetch(body.url).catch(() => null);
        ok = !!r && r.status === 200;
        await r?.arrayBuffer().catch(() => null);
      }
      this.conversions.push({ url: body.url, ok });
      return void res.end(JSON.stringify(ok ? { endConvert: true, fileUrl: `${this.url}/cache/probe.txt`, percent: 100 } : { error: -4 }));
    }
    res.statusCode = 404;
    res.end('not found');
  }

  /** The editor frame: opens the document as the real server does (token, signed fetch, status 1) and shows it. */
  private async editorPage(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    let session: EditorSession;
    try {
      const config = JSON.parse(new URL(req.url ?? '/', this.url).searchParams.get('config') ?? '{}');
      session = await this.open({ config });
    } catch (e) {
      res.statusCode = 403;
      return void res.end(page('Error', `<p id="error">${esc((e as Error).message)}</p>`));
    }
    const id = String(++this.seq);
    this.sessions.set(id, session);
    const connected = await this.callback(session, 1);
    const edit = session.config.editorConfig?.mode === 'edit';
    res.end(
      page(
        session.config.document.title,
        `
<h1>${esc(session.config.document.title)}</h1>
<p id="loaded">Loaded ${session.bytes.length} bytes (${esc(session.fileType)}), ${edit ? 'editing' : 'view only'}; status 1 answered ${connected.status}</p>
${edit ? `<form method="post" action="/editor/save?session=${id}"><label>Add text <input name="text"></label> <button>Save</button></form>` : ''}`,
      ),
    );
  }

  /** Save from the frame: the bytes plus the typed text become the revision, announced with status 2. */
  private async editorSave(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('text') ?? '';
    const session = this.sessions.get(new URL(req.url ?? '/', this.url).searchParams.get('session') ?? '');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (!session) {
      res.statusCode = 404;
      return void res.end(page('Error', '<p id="error">no such editor session</p>'));
    }
    const bytes = Buffer.concat([session.bytes, Buffer.from(`\n${text}`)]);
    const r = await this.save(session, 2, bytes);
    this.saved.push({ bytes, status: r.status, body: r.body });
    res.end(page('Saved', `<p id="saved">Saved ${bytes.length} bytes: the service answered ${r.status} ${esc(JSON.stringify(r.body))}</p>`));
  }

  /** What the editor page does: verifies the config's token, then fetches the document from its signed URL. */
  async open(descriptor: { config: Record<string, any> }): Promise<EditorSession> {
    const { token, ...config } = descriptor.config;
    const { payload } = await jwtVerify(token, enc(this.secret), { algorithms: ['HS256'] });
    if ((payload as any).document.key !== config.document.key) throw new Error('the token does not sign this config');
    const r = await fetch(config.document.url);
    if (r.status !== 200) throw new Error(`document fetch answered ${r.status}: ${await r.text()}`);
    return {
      key: config.document.key,
      callbackUrl: config.editorConfig.callbackUrl,
      fileType: config.document.fileType,
      bytes: Buffer.from(await r.arrayBuffer()),
      config,
    };
  }

  /** Serves `bytes` as a revision (`chunked`: without a Content-Length); returns its URL. */
  revision(bytes: Buffer, ext = 'docx', o: { chunked?: boolean } = {}): string {
    const path = `/cache/files/${++this.seq}/output.${ext}`;
    this.files.set(path, { bytes, chunked: o.chunked });
    return this.url + path;
  }

  /** A revision that declares `size` bytes and streams zeros. */
  hugeRevision(size: number): string {
    const path = `/cache/files/${++this.seq}/huge.docx`;
    this.files.set(path, { size });
    return this.url + path;
  }

  /** A signed callback body (and the headers it travels with). */
  async callbackRequest(
    s: EditorSession,
    status: number,
    o: CallbackOptions = {},
  ): Promise<{ body: Record<string, unknown>; headers: Record<string, string> }> {
    const data: Record<string, unknown> = { key: o.key ?? s.key, status, users: ['1'], actions: [{ type: 0, userid: '1' }] };
    if (status === 2 || status === 3 || status === 6 || status === 7) data.lastsave = (o.lastsave ?? new Date()).toISOString();
    if (o.url) data.url = o.url;
    if (status === 6) data.forcesavetype = 0;
    const claims = o.via === 'header' ? { payload: data } : data;
    let token: string;
    if (o.alg === 'none') token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    else {
      const j = new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt();
      if (o.expiresIn !== undefined) j.setExpirationTime(Math.floor(Date.now() / 1000) + o.expiresIn);
      token = await j.sign(enc(o.secret ?? this.secret));
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (o.via === 'header') return { body: data, headers: { ...headers, authorization: `Bearer ${token}` } };
    return { body: { ...data, token }, headers };
  }

  /** POSTs a callback (signed as `o` says) and answers the service's status and body. */
  async callback(s: EditorSession, status: number, o: CallbackOptions = {}): Promise<{ status: number; body: any }> {
    const req = await this.callbackRequest(s, status, o);
    return this.post(o.callbackUrl ?? s.callbackUrl, req);
  }

  /** Sends a prepared callback request again (a replay). */
  async post(url: string, req: { body: Record<string, unknown>; headers: Record<string, string> }): Promise<{ status: number; body: any }> {
    const r = await fetch(url, { method: 'POST', headers: req.headers, body: JSON.stringify(req.body) });
    const text = await r.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: r.status, body };
  }

  /** "Edits" and saves: serves `bytes` as the revision and sends callback `status` for it. */
  async save(s: EditorSession, status: 2 | 6, bytes: Buffer, o: CallbackOptions = {}): Promise<{ status: number; body: any }> {
    return this.callback(s, status, { ...o, url: o.url ?? this.revision(bytes, s.fileType) });
  }
}
