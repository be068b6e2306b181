/**
 * A real server with the S3 gateway on a loopback port, a local storage
 * `Box`, and API keys with their S3 credentials; plus the real clients
 * (awscli, s3cmd, rclone) run against it with a timeout.
 */
import { execFile } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { request } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

export interface S3Creds {
  access_key_id: string;
  secret_access_key: string;
  token: string;
}

export interface S3Env {
  s: TestServer;
  endpoint: string;
  /** The local folder behind storage `Box`. */
  root: string;
  /** A scratch folder for client-side files. */
  work: string;
  admin: string;
  /** Full-access S3 credentials of the admin. */
  creds: S3Creds;
  /** Makes a key for the account behind `token`. */
  key(token: string, body: { verbs: string[]; root?: string; name?: string }): Promise<S3Creds>;
  sdk(c?: S3Creds): S3Client;
  close(): Promise<void>;
}

/** The AWS SDK's client for the S3 gateway at `endpoint` with a key's S3 credentials (path-style, no retries). */
export const s3Client = (endpoint: string, c: Pick<S3Creds, 'access_key_id' | 'secret_access_key'>): S3Client =>
  new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
    maxAttempts: 1,
  });

export async function startS3Env(env: Record<string, string> = {}): Promise<S3Env> {
  const { dir, cleanup } = tempDir('filedock-s3-');
  const root = join(dir, 'box');
  const work = join(dir, 'work');
  mkdirSync(root);
  mkdirSync(work);
  const s = await startTestServer({ SERVICE_S3_LISTEN: '127.0.0.1:0', ...env });
  const endpoint = s.server.services.gateways.registry.status().gateways.find((g) => g.protocol === 's3')!.url!;
  const admin = await s.login();
  const made = await s.api('POST', '/api/admin/storages', {
    token: admin,
    body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } },
  });
  if (made.status !== 200) throw new Error(`storage: ${JSON.stringify(made.body)}`);
  const key: S3Env['key'] = async (token, body) => {
    const r = await s.api('POST', '/api/auth/keys', { token, body: { name: body.name ?? 's3', ...body } });
    if (r.status !== 200 && r.status !== 201) throw new Error(`key: ${JSON.stringify(r.body)}`);
    return { ...r.body.s3, token: r.body.token };
  };
  const creds = await key(admin, { verbs: ['files:read', 'files:write'] });
  const sdk = (c = creds) => s3Client(endpoint, c);
  return {
    s,
    endpoint,
    root,
    work,
    admin,
    creds,
    key,
    sdk,
    async close() {
      await s.close();
      cleanup();
    },
  };
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a client with a timeout; never throws for a non-zero exit. */
export function run(bin: string, args: string[], o: { env?: Record<string, string>; cwd?: string; timeoutS?: number } = {}): Promise<Run> {
  return new Promise((ok) => {
    // A CA bundle set for the machine's own tools means nothing on plain-HTTP loopback and trips rclone.
    const { AWS_CA_BUNDLE: _ca, ...inherited } = process.env;
    execFile(
      'timeout',
      [String(o.timeoutS ?? 120), bin, ...args],
      { env: { ...inherited, ...o.env }, cwd: o.cwd, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        ok({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/** awscli against the gateway with `c`'s credentials (no config files of the machine read). */
export function aws(e: S3Env, args: string[], c: S3Creds = e.creds, timeoutS = 180): Promise<Run> {
  const home = join(e.work, '.aws-home');
  mkdirSync(home, { recursive: true });
  // awscli v1 presigns with SigV2 unless told otherwise; the gateway speaks SigV4 only.
  writeFileSync(join(home, 'config'), '[default]\ns3 =\n    signature_version = s3v4\n');
  return run('aws', ['--endpoint-url', e.endpoint, '--region', 'us-east-1', ...args], {
    timeoutS,
    env: {
      HOME: home,
      AWS_ACCESS_KEY_ID: c.access_key_id,
      AWS_SECRET_ACCESS_KEY: c.secret_access_key,
      AWS_CONFIG_FILE: join(home, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: join(home, 'none'),
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_PAGER: '',
    },
  });
}

/** s3cmd with a config file written for the gateway. */
export function s3cmd(e: S3Env, args: string[], c: S3Creds = e.creds): Promise<Run> {
  const cfg = join(e.work, '.s3cfg');
  const host = e.endpoint.replace(/^http:\/\//, '');
  writeFileSync(
    cfg,
    [
      '[default]',
      `access_key = ${c.access_key_id}`,
      `secret_key = ${c.secret_access_key}`,
      `host_base = ${host}`,
      `host_bucket = ${host}`,
      'use_https = False',
      'signature_v2 = False',
      'bucket_location = us-east-1',
      'check_ssl_certificate = False',
      '',
    ].join('\n'),
  );
  return run('s3cmd', ['-c', cfg, ...args], { timeoutS: 180 });
}

/** rclone with an `fd:` S3 remote on the gateway (configured by environment only). */
export function rclone(e: S3Env, args: string[], c: S3Creds = e.creds): Promise<Run> {
  return run('rclone', ['--config', '/dev/null', ...args], {
    timeoutS: 180,
    env: {
      RCLONE_CONFIG_FD_TYPE: 's3',
      RCLONE_CONFIG_FD_PROVIDER: 'Other',
      RCLONE_CONFIG_FD_ENDPOINT: e.endpoint,
      RCLONE_CONFIG_FD_ACCESS_KEY_ID: c.access_key_id,
      RCLONE_CONFIG_FD_SECRET_ACCESS_KEY: c.secret_access_key,
      RCLONE_CONFIG_FD_FORCE_PATH_STYLE: 'true',
      RCLONE_CONFIG_FD_REGION: 'us-east-1',
    },
  });
}

/** Writes `n` small files under `dir` in a few nested folders. */
export function makeTree(dir: string, n: number): void {
  for (let i = 0; i < n; i++) {
    const sub = join(dir, `d${i % 7}`, `e${i % 3}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.txt`), `file ${i} ${'x'.repeat(i % 50)}`);
  }
}

/** A request signed by hand (the documented SigV4 algorithm), for what no SDK sends: raw paths, aws-chunked. */
export function signed(
  e: S3Env,
  c: S3Creds,
  o: {
    method: string;
    path: string;
    headers?: Record<string, string>;
    payloadHash: string;
    body?: Buffer | ((seed: string, key: Buffer, amz: string) => Buffer);
    cut?: number;
    stall?: boolean;
    amz?: string;
  },
) {
  const url = new URL(e.endpoint);
  const amz =
    o.amz ??
    new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
  const date = amz.slice(0, 8);
  const headers: Record<string, string> = { host: url.host, 'x-amz-date': amz, 'x-amz-content-sha256': o.payloadHash, ...o.headers };
  const names = Object.keys(headers)
    .map((n) => n.toLowerCase())
    .sort();
  const [path, query = ''] = o.path.split('?');
  const canonical = [
    o.method,
    path,
    query && !query.includes('=') ? `${query}=` : query,
    names.map((n) => `${n}:${headers[n]}\n`).join(''),
    names.join(';'),
    o.payloadHash,
  ].join('\n');
  const h = (k: string | Buffer, d: string) => createHmac('sha256', k).update(d).digest();
  const key = h(h(h(h(`AWS4${c.secret_access_key}`, date), 'us-east-1'), 's3'), 'aws4_request');
  const scope = `${date}/us-east-1/s3/aws4_request`;
  const sig = h(key, ['AWS4-HMAC-SHA256', amz, scope, createHash('sha256').update(canonical).digest('hex')].join('\n')).toString('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${c.access_key_id}/${scope}, SignedHeaders=${names.join(';')}, Signature=${sig}`;
  const body = typeof o.body === 'function' ? o.body(sig, key, amz) : o.body;
  if (body) headers['content-length'] = String(body.length);
  // `cut`: send that many bytes of the body, then drop the connection (a client gone mid-upload), or with `stall` go silent.
  return new Promise<{ status: number; text: string }>((ok, fail) => {
    const req = request({ host: url.hostname, port: url.port, method: o.method, path: o.path, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => ok({ status: res.statusCode!, text: Buffer.concat(parts).toString() }));
    });
    if (o.cut === undefined) {
      req.on('error', fail);
      req.end(body);
      return;
    }
    req.on('error', () => ok({ status: 0, text: 'dropped' }));
    req.write(body!.subarray(0, o.cut), () => (o.stall ? undefined : setTimeout(() => req.destroy(), 200)));
  });
}
