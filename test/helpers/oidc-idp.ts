/**
 * A real OpenID provider for tests: `oidc-provider` on 127.0.0.1 (port 0)
 * behind a small proxy that can rewrite the ID token of token responses (a
 * tampered token), with its development login and consent pages, accounts
 * served by `findAccount` from a mutable map, clients added at run time (the
 * server under test picks its port first), and an adjustable code lifetime.
 * `Browser` is a fetch with a cookie jar that walks the provider's pages the
 * way a person would.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import Provider from 'oidc-provider';

/** A person at the provider; their login name is their `sub`. */
export interface IdpAccount {
  email?: string;
  email_verified?: boolean;
  preferred_username?: string;
  groups?: string[];
}

export interface TestIdp {
  issuer: string;
  /** Accounts by login name, which is also their `sub` (the dev login page takes the name; the password is ignored). */
  accounts: Map<string, IdpAccount>;
  /** Seconds an authorization code lives (default 60). */
  codeTtl: number;
  /** When set, applied to the `id_token` of every token response before the client sees it. */
  tamper: ((idToken: string) => string | Promise<string>) | null;
  /** Registers a confidential client (client_secret_basic, PKCE required by the provider). */
  addClient(clientId: string, secret: string, redirectUris: string[]): Promise<void>;
  close(): Promise<void>;
}

const listen = (srv: Server) => new Promise<number>((r) => srv.listen(0, '127.0.0.1', () => r((srv.address() as { port: number }).port)));

/** `claimsInIdToken`: false follows the spec (profile claims only from userinfo); true puts them in the ID token too. */
export async function startIdp(opts: { claimsInIdToken?: boolean } = {}): Promise<TestIdp> {
  const inner = createServer();
  const front = createServer();
  const innerPort = await listen(inner);
  const issuer = `http://127.0.0.1:${await listen(front)}`;
  const idp: TestIdp = {
    issuer,
    accounts: new Map(),
    codeTtl: 60,
    tamper: null,
    addClient: (id, secret, redirectUris) =>
      provider.Client.adapter.upsert(id, {
        client_id: id,
        client_secret: secret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
    close: async () => {
      for (const s of [front, inner]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    },
  };
  const provider = new Provider(issuer, {
    scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'name'], groups: ['groups'] },
    conformIdTokenClaims: !opts.claimsInIdToken,
    pkce: { required: () => true },
    findAccount: (_ctx: unknown, id: string) => {
      const a = idp.accounts.get(id);
      return a && { accountId: id, claims: () => ({ sub: id, ...a }) };
    },
    ttl: {
      AuthorizationCode: () => idp.codeTtl,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      AccessToken: 600,
      IdToken: 600,
    },
  });
  inner.on('request', provider.callback());
  front.on('request', (req, res) => void proxy(req, res, innerPort, idp).catch(() => res.destroy()));
  return idp;
}

/** Forwards one request to the provider; token responses pass through `idp.tamper` when it is set. */
async function proxy(req: IncomingMessage, res: ServerResponse, port: number, idp: TestIdp): Promise<void> {
  const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
    const out = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, resolve);
    out.on('error', reject);
    pipeline(req, out).catch(reject);
  });
  const tamper = idp.tamper;
  if (!tamper || !req.url?.startsWith('/token')) {
    res.writeHead(upstream.statusCode ?? 502, upstream.headers);
    await pipeline(upstream, res);
    return;
  }
  const chunks: Buffer[] = [];
  for await (const c of upstream) chunks.push(c as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (typeof body.id_token === 'string') body.id_token = await tamper(body.id_token);
  const out = Buffer.from(JSON.stringify(body));
  res.writeHead(upstream.statusCode ?? 502, { ...upstream.headers, 'content-length': String(out.length) });
  res.end(out);
}

/** A JWT with its payload changed by `edit` and the original signature kept. */
export function editJwtPayload(jwt: string, edit: (claims: Record<string, unknown>) => void): string {
  const [h, p, sig] = jwt.split('.');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  edit(claims);
  return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
}

/** fetch with a per-origin cookie jar (path-scoped, expiry honoured) and no automatic redirects. */
export class Browser {
  private jar = new Map<string, Map<string, { value: string; path: string }>>();

  /** The cookie `name` this browser holds for `origin`, if any. */
  cookie(origin: string, name: string): string | undefined {
    return this.jar.get(new URL(origin).host)?.get(name)?.value;
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const u = new URL(url);
    const cookies = [...(this.jar.get(u.host) ?? [])].filter(([, c]) => u.pathname.startsWith(c.path)).map(([k, c]) => `${k}=${c.value}`);
    const headers = new Headers(init.headers);
    if (cookies.length) headers.set('cookie', cookies.join('; '));
    const res = await fetch(u, { ...init, headers, redirect: 'manual' });
    const store = this.jar.get(u.host) ?? new Map();
    this.jar.set(u.host, store);
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';').map((x) => x.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const attr = (n: string) => attrs.find((a) => a.toLowerCase().startsWith(n + '='))?.split('=')[1];
      const expires = attr('expires');
      const gone = value === '' || attr('max-age') === '0' || (expires !== undefined && Date.parse(expires) <= Date.now());
      if (gone) store.delete(name);
      else store.set(name, { value, path: attr('path') ?? '/' });
    }
    return res;
  }

  /**
   * Follows an authorization URL through the provider's login and consent
   * pages as `login`, and returns the URL the provider redirects to once it
   * leaves its own origin (the client's callback with `code` and `state`, or
   * with `error`). `abort` cancels at the login page instead.
   */
  async throughProvider(authUrl: string, login: string, opts: { abort?: boolean } = {}): Promise<string> {
    const origin = new URL(authUrl).origin;
    let url = authUrl;
    for (let hop = 0; hop < 20; hop++) {
      if (new URL(url).origin !== origin) return url;
      let res = await this.fetch(url);
      if (res.status === 200) {
        const html = await res.text();
        const action = new URL(/<form[^>]*action="([^"]+)"/.exec(html)![1].replace(/&amp;/g, '&'), origin).href;
        const isLogin = /name="prompt" value="login"/.test(html);
        if (opts.abort) {
          res = await this.fetch(new URL(/href="([^"]*\/abort)"/.exec(html)![1], origin).href);
        } else {
          const form: Record<string, string> = isLogin ? { prompt: 'login', login, password: 'any' } : { prompt: 'consent' };
          res = await this.fetch(action, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(form).toString(),
          });
        }
      }
      const loc = res.headers.get('location');
      if (!loc) throw new Error(`provider page ${url} answered ${res.status} without a redirect: ${(await res.text()).slice(0, 300)}`);
      url = new URL(loc, url).href;
    }
    throw new Error('too many redirects at the provider');
  }
}
