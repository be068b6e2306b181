/**
 * A real S3-compatible server for tests: npm `s3rver` run as a child process
 * on a loopback port with its own temp dir, stopped by PID. Path-style only;
 * ListParts and AbortMultipartUpload answer 405 there (see RECIPES.md), and
 * truncated listings need Node's OpenSSL legacy provider (see `launch`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { tempDir } from './tools';
import { stopChild } from './servers';

/** s3rver's one built-in key pair; it checks signatures against it. */
export const S3RVER_KEY = 'S3RVER';

export interface S3rver {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  port: number;
  bucket: string;
  /** Data directory; survives `stop()`/`start()` so a restart keeps the objects. */
  dir: string;
  /** PID of the running server, or null while stopped. */
  pid(): number | null;
  /** Kills the server (SIGKILL, as a crash would); the port stays reserved for `start`. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data dir. */
  start(): Promise<void>;
  /** Stops the server and removes its data dir. Idempotent. */
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
const BIN = join(dirname(require.resolve('s3rver/package.json')), 'bin', 's3rver.js');
const START_TIMEOUT_MS = 15_000;

function launch(dir: string, port: number, bucket: string): Promise<{ child: ChildProcess; port: number }> {
  // s3rver encrypts continuation tokens with DES, which OpenSSL 3 only offers
  // through its legacy provider; without it every truncated listing answers 500.
  const args = [
    '--openssl-legacy-provider',
    BIN,
    '-d',
    dir,
    '-a',
    '127.0.0.1',
    '-p',
    String(port),
    '--silent',
    '--no-vhost-buckets',
    '--configure-bucket',
    bucket,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`s3rver did not start within ${START_TIMEOUT_MS} ms: ${out}`)), START_TIMEOUT_MS);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.on('exit', (code) => fail(new Error(`s3rver exited with ${code}: ${out}`)));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /S3rver listening on [^:]+:(\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      // The server logs every request; keep draining so a full pipe never blocks it.
      child.stdout!.resume();
      child.stderr!.resume();
      resolve({ child, port: Number(m[1]) });
    });
  });
}

/**
 * Starts s3rver on a free loopback port (the OS picks it) with a fresh temp dir
 * and one bucket. Callers must `close()` it in teardown.
 */
export async function startS3rver(opts: { bucket?: string } = {}): Promise<S3rver> {
  const bucket = opts.bucket ?? 'filedock-test';
  const { dir, cleanup } = tempDir('filedock-s3rver-');
  let { child, port } = await launch(dir, 0, bucket);
  let running: ChildProcess | null = child;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    bucket,
    dir,
    pid: () => running?.pid ?? null,
    async stop() {
      if (running) await stopChild(running, 'SIGKILL');
      running = null;
    },
    async start() {
      if (running) return;
      ({ child, port } = await launch(dir, port, bucket));
      running = child;
    },
    async close() {
      if (running) await stopChild(running, 'SIGKILL');
      running = null;
      cleanup();
    },
  };
}

/**
 * Puts objects straight into the server's data dir, the way s3rver stores
 * them (`<bucket>/<key>._S3rver_object` plus its `.md5`): thousands of
 * fixture objects in well under a second, where PUTs take ~10 ms each here.
 * The server lists and serves them like uploaded ones (content type
 * application/octet-stream).
 */
export function seedObjects(server: S3rver, objects: Iterable<{ key: string; body: string | Buffer }>): number {
  let n = 0;
  for (const { key, body } of objects) {
    const segs = key.split('/');
    const dir = join(server.dir, server.bucket, ...segs.slice(0, -1));
    const file = join(dir, `${segs[segs.length - 1]}._S3rver_object`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, body);
    writeFileSync(`${file}.md5`, createHash('md5').update(body).digest('hex'));
    n++;
  }
  return n;
}

/** The `s3` driver config that points at this server under `prefix`. */
export function s3rverConfig(server: S3rver, prefix: string): Record<string, unknown> {
  return {
    bucket: server.bucket,
    prefix,
    endpoint: server.endpoint,
    region: 'us-east-1',
    access_key: S3RVER_KEY,
    secret_key: S3RVER_KEY,
  };
}

/** A plain SDK client on this server, to look at raw keys behind a driver's back. */
export function rawS3Client(server: S3rver): S3Client {
  return new S3Client({
    endpoint: server.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/**
 * Counts the commands `client` sends, by name (ListObjectsV2Command, ...).
 * Counted once per call, before retries; reset by clearing the map.
 */
export function countS3Commands(client: S3Client): Map<string, number> {
  const counts = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      counts.set(context.commandName ?? '?', (counts.get(context.commandName ?? '?') ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'filedockCountCommands' },
  );
  return counts;
}
