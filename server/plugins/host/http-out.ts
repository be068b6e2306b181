/**
 * `http.fetch` for apps: only to a host the manifest declares and the admin
 * approved, fetched here on the host side (the sandbox has no network) with a
 * timeout and a size cap. Redirects are not followed (one could lead to a host
 * nobody approved): the app sees the 3xx and its Location.
 */
import { AppError } from '../../errors';

export const HTTP_OUT = { timeout_ms: 10_000, max_response_bytes: 512 * 1024, max_request_bytes: 256 * 1024 };

const refuse = (plugin: string, reason: string) => new AppError('app_host_refused', { plugin, reason }, { reason });

export interface FetchArgs {
  url?: unknown;
  method?: unknown;
  headers?: unknown;
  body?: unknown;
}

export async function appFetch(plugin: string, allowed: string[], a: FetchArgs, signal?: AbortSignal) {
  let u: URL;
  try {
    u = new URL(String(a.url));
  } catch {
    throw refuse(plugin, 'not a URL');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw refuse(plugin, 'only http(s)');
  if (u.username || u.password) throw refuse(plugin, 'no credentials in the URL');
  // The manifest names `host` or `host:port`; the URL's own port counts when it has one.
  if (!allowed.includes(u.host.toLowerCase()) && !(u.port === '' && allowed.includes(u.hostname.toLowerCase())))
    throw refuse(plugin, `${u.host} is not an approved host`);
  const method = typeof a.method === 'string' ? a.method.toUpperCase() : 'GET';
  if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].includes(method)) throw refuse(plugin, 'method not allowed');
  const headers: Record<string, string> = {};
  if (a.headers && typeof a.headers === 'object')
    for (const [k, v] of Object.entries(a.headers).slice(0, 32))
      if (typeof v === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(k) && !/^(host|cookie|connection|content-length|transfer-encoding)$/i.test(k))
        headers[k] = v.slice(0, 4096);
  const body = typeof a.body === 'string' ? a.body : undefined;
  if (body && Buffer.byteLength(body) > HTTP_OUT.max_request_bytes) throw refuse(plugin, 'request body too large');
  const timeout = AbortSignal.timeout(HTTP_OUT.timeout_ms);
  let res: Response;
  try {
    res = await fetch(u, { method, headers, body, redirect: 'manual', signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch {
    throw refuse(plugin, timeout.aborted ? 'the host did not answer in time' : 'the host could not be reached');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const reader = res.body?.getReader();
    for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) {
      const c = r.value;
      size += c.length;
      if (size > HTTP_OUT.max_response_bytes) {
        await reader!.cancel().catch(() => undefined);
        throw refuse(plugin, `response larger than ${HTTP_OUT.max_response_bytes} bytes`);
      }
      chunks.push(Buffer.from(c));
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw refuse(plugin, timeout.aborted ? 'the host did not answer in time' : 'the response broke off');
  }
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => (out[k] = v));
  return { status: res.status, headers: out, body: Buffer.concat(chunks).toString('utf8') };
}
