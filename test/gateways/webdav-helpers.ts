/**
 * WebDAV test helpers: curl as the client (so URLs go out exactly as written,
 * `--path-as-is`), answers parsed into status, headers and body.
 */
import { execFile } from 'node:child_process';

export interface CurlAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Runs curl against `url` with a method, headers and an optional body; never throws on HTTP errors. */
export function curl(
  url: string,
  o: { method?: string; user?: string; headers?: Record<string, string>; body?: string | Buffer; args?: string[] } = {},
): Promise<CurlAnswer> {
  const args = ['-s', '-i', '--path-as-is', '-X', o.method ?? 'GET', '--max-time', '20'];
  if (o.user !== undefined) args.push('-u', o.user);
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push('-H', `${k}: ${v}`);
  if (o.body !== undefined) args.push('--data-binary', '@-');
  args.push(...(o.args ?? []), url);
  return new Promise((resolve, reject) => {
    const child = execFile('timeout', ['30', 'curl', ...args], { encoding: 'buffer', maxBuffer: 64 << 20 }, (err, stdout) => {
      if (err && !stdout.length) return reject(err);
      const text = stdout.toString('utf8');
      // Skip interim answers (100 Continue).
      let rest = text;
      for (;;) {
        const end = rest.indexOf('\r\n\r\n');
        const head = rest.slice(0, end);
        rest = rest.slice(end + 4);
        const status = Number(/^HTTP\/[\d.]+ (\d+)/.exec(head)?.[1]);
        if (status === 100 && rest.startsWith('HTTP/')) continue;
        const headers: Record<string, string> = {};
        for (const line of head.split('\r\n').slice(1)) {
          const i = line.indexOf(':');
          headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
        }
        return resolve({ status, headers, body: rest });
      }
    });
    if (o.body !== undefined) child.stdin!.end(o.body);
  });
}

export const PROPFIND_ALL = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>';
export const LOCKINFO = (scope = 'exclusive') =>
  `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:${scope}/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner><D:href>test</D:href></D:owner></D:lockinfo>`;
