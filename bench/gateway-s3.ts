/**
 * The S3 gateway against anchors in the same run (the built service as a
 * child process, alternating runs, medians):
 *   - GetObject of a BENCH_MIB file with awscli (`aws s3 cp`, its default
 *     parallel ranged GETs) against this service's raw HTTP download of the
 *     same file (curl), both writing the file to the same disk. Target >= 90 %.
 *   - ListObjectsV2 of a 10,000-key folder, every page (1,000 keys each),
 *     with the AWS SDK. Target < 300 ms. Anchor: the web listing API paging
 *     the same folder.
 *   - Upload of the file with awscli (multipart, 8 MiB parts) against
 *     nginx's WebDAV PUT of it (curl -T). Reported.
 *   - Idle CPU of the service with the S3 listener on (5 s of clock ticks),
 *     against the same service without it.
 *   - RSS growth while 100 clients hold keep-alive connections and each
 *     signs and sends requests. Target < 100 MB.
 *
 *   node --import tsx bench/gateway-s3.ts   (BENCH_RUNS=3, BENCH_MIB=2048, BENCH_KEYS=10000)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ensureBuilt, freePort, median, noise, sleep, startNginx, startService, table } from './lib';
import { adminEnv, curl, mount } from './download';
import { tempDir } from '../test/helpers/tools';

const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BYTES = Number(process.env.BENCH_MIB ?? 2048) * MiB;
const KEYS = Number(process.env.BENCH_KEYS ?? 10_000);

const secs = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;

function awsCli(endpoint: string, creds: { access_key_id: string; secret_access_key: string }, home: string, args: string[]): number {
  const { AWS_CA_BUNDLE: _ca, ...env } = process.env;
  const t0 = process.hrtime.bigint();
  const r = spawnSync('aws', ['--endpoint-url', endpoint, '--region', 'us-east-1', '--only-show-errors', ...args], {
    env: {
      ...env,
      HOME: home,
      AWS_ACCESS_KEY_ID: creds.access_key_id,
      AWS_SECRET_ACCESS_KEY: creds.secret_access_key,
      AWS_CONFIG_FILE: join(home, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: join(home, 'none'),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`aws ${args.join(' ')} exited ${r.status}`);
  return secs(t0);
}

const ticks = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime
};

async function main(): Promise<void> {
  ensureBuilt();
  const files = tempDir('filedock-bench-s3-');
  const data = join(files.dir, 'data');
  const dav = join(files.dir, 'dav');
  mkdirSync(join(data, 'many'), { recursive: true });
  mkdirSync(dav, { mode: 0o777 });
  mkdirSync(join(files.dir, 'davtmp'), { mode: 0o777 });
  chmodSync(files.dir, 0o755);
  chmodSync(dav, 0o777);
  chmodSync(join(files.dir, 'davtmp'), 0o777);
  const home = join(files.dir, 'home');
  mkdirSync(home);
  writeFileSync(join(home, 'config'), '[default]\ns3 =\n    signature_version = s3v4\n');
  await pipeline(noise(BYTES), createWriteStream(join(data, 'big.bin')));
  for (let i = 0; i < KEYS; i++) writeFileSync(join(data, 'many', `k${String(i).padStart(6, '0')}.txt`), String(i));
  const s3Port = await freePort();
  const svc = await startService({ ...adminEnv, SERVICE_S3_LISTEN: `127.0.0.1:${s3Port}` });
  const endpoint = `http://127.0.0.1:${s3Port}`;
  const nginx = await startNginx(
    files.dir,
    `location /dav/ { dav_methods PUT; client_max_body_size 0; client_body_buffer_size 1m; client_body_temp_path ${join(files.dir, 'davtmp')}; }`,
  );
  try {
    const token = await mount(svc, 'Bench', data);
    const auth = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const made = await fetch(`${svc.url}/api/auth/keys`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'bench', verbs: ['files:read', 'files:write'] }),
    });
    const creds = ((await made.json()) as { s3: { access_key_id: string; secret_access_key: string } }).s3;
    for (let waited = 0; ; waited += 100) {
      const r = (await (await fetch(`${svc.url}/api/files/manager?path=/Bench/many&limit=1`, { headers: auth })).json()) as { total?: number };
      if ((r.total ?? 0) >= KEYS) break;
      if (waited > 120_000) throw new Error(`the first sync did not list ${KEYS} keys: ${JSON.stringify(r)}`);
      await sleep(100);
    }
    execFileSync('sh', ['-c', 'cat "$1" > /dev/null', 'sh', join(data, 'big.bin')]);

    // GetObject vs raw download, both into a file on the same disk.
    const out = join(files.dir, 'out.bin');
    const raw: number[] = [];
    const get: number[] = [];
    const presigned: number[] = [];
    const { AWS_CA_BUNDLE: _ca, ...env } = process.env;
    const url = execFileSync('aws', ['--endpoint-url', endpoint, '--region', 'us-east-1', 's3', 'presign', 's3://Bench/big.bin', '--expires-in', '3600'], {
      encoding: 'utf8',
      env: {
        ...env,
        HOME: home,
        AWS_ACCESS_KEY_ID: creds.access_key_id,
        AWS_SECRET_ACCESS_KEY: creds.secret_access_key,
        AWS_CONFIG_FILE: join(home, 'config'),
      },
    }).trim();
    for (let i = 0; i < RUNS; i++) {
      raw.push(curl(['-H', `authorization: Bearer ${token}`, '-o', out, `${svc.url}/api/files/raw?path=/Bench/big.bin`]));
      rmSync(out, { force: true });
      get.push(awsCli(endpoint, creds, home, ['s3', 'cp', 's3://Bench/big.bin', out]));
      rmSync(out, { force: true });
      presigned.push(curl(['-o', out, url]));
      rmSync(out, { force: true });
    }
    // Uploads: awscli multipart and a presigned PutObject by curl vs nginx WebDAV PUT.
    const sdk = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: creds.access_key_id, secretAccessKey: creds.secret_access_key },
    });
    const putUrl = await getSignedUrl(sdk, new PutObjectCommand({ Bucket: 'Bench', Key: 'up/put.bin' }), { expiresIn: 3600 });
    const put: number[] = [];
    const curlPut: number[] = [];
    const davPut: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      if (nginx) {
        davPut.push(curl(['-T', join(data, 'big.bin'), `${nginx.url}/dav/up.bin`]));
        rmSync(join(dav, 'up.bin'), { force: true });
      }
      put.push(awsCli(endpoint, creds, home, ['s3', 'cp', join(data, 'big.bin'), 's3://Bench/up/up.bin']));
      rmSync(join(data, 'up/up.bin'), { force: true });
      curlPut.push(curl(['-T', join(data, 'big.bin'), putUrl]));
      rmSync(join(data, 'up/put.bin'), { force: true });
    }
    const mbps = (s: number) => (BYTES / s / 1e6).toFixed(0);
    const row = (what: string, xs: number[]) => ({
      what,
      'median s': median(xs).toFixed(2),
      'MB/s': mbps(median(xs)),
      runs: xs.map((x) => x.toFixed(2)).join(' '),
    });
    table(`Transfers of ${BYTES / MiB} MiB over loopback, ${RUNS} alternating runs`, [
      row('raw HTTP download (curl -o file)', raw),
      row('S3 GetObject (aws s3 cp)', get),
      row('S3 GetObject, presigned (curl -o file)', presigned),
      ...(nginx ? [row('nginx WebDAV PUT (curl -T)', davPut)] : []),
      row('S3 multipart upload (aws s3 cp)', put),
      row('S3 PutObject, presigned (curl -T)', curlPut),
    ]);
    const ratio = median(raw) / median(get);
    console.log(`\nGetObject with awscli / raw download: ${(ratio * 100).toFixed(0)} % (target >= 90 %) ${ratio >= 0.9 ? 'PASS' : 'FAIL'}`);
    console.log(
      `GetObject with curl (presigned) / raw download: ${((median(raw) / median(presigned)) * 100).toFixed(0)} % (same client: the gateway's own cost)`,
    );
    if (nginx)
      console.log(
        `S3 upload / nginx PUT: awscli ${((median(davPut) / median(put)) * 100).toFixed(0)} %, curl presigned ${((median(davPut) / median(curlPut)) * 100).toFixed(0)} % (reported)`,
      );

    // ListObjectsV2 of the whole folder, every page, vs the web listing API.
    const listS3 = async () => {
      const t0 = process.hrtime.bigint();
      let token: string | undefined;
      let n = 0;
      do {
        const r = await sdk.send(new ListObjectsV2Command({ Bucket: 'Bench', Prefix: 'many/', ContinuationToken: token }));
        n += r.KeyCount ?? 0;
        token = r.NextContinuationToken;
      } while (token);
      if (n !== KEYS) throw new Error(`listed ${n}`);
      return secs(t0) * 1000;
    };
    // The same pages fetched as text through presigned URLs: the server's time without the SDK's XML parsing.
    const listRaw = async () => {
      const t0 = process.hrtime.bigint();
      let token: string | undefined;
      let n = 0;
      do {
        const url = await getSignedUrl(sdk, new ListObjectsV2Command({ Bucket: 'Bench', Prefix: 'many/', ContinuationToken: token }), { expiresIn: 300 });
        const text = await (await fetch(url)).text();
        n += text.split('<Key>').length - 1;
        token = /<NextContinuationToken>([^<]+)</.exec(text)?.[1];
      } while (token);
      if (n !== KEYS) throw new Error(`raw listed ${n}`);
      return secs(t0) * 1000;
    };
    const listWeb = async () => {
      const t0 = process.hrtime.bigint();
      let cursor: string | null = null;
      let n = 0;
      do {
        const r = (await (
          await fetch(`${svc.url}/api/files/manager?path=/Bench/many&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: auth })
        ).json()) as { entries: unknown[]; next_cursor: string | null };
        n += r.entries.length;
        cursor = r.next_cursor;
      } while (cursor);
      if (n !== KEYS) throw new Error(`web listed ${n}`);
      return secs(t0) * 1000;
    };
    await listS3();
    await listRaw();
    await listWeb();
    const s3ms: number[] = [];
    const rawms: number[] = [];
    const webms: number[] = [];
    for (let i = 0; i < 5; i++) {
      webms.push(await listWeb());
      rawms.push(await listRaw());
      s3ms.push(await listS3());
    }
    const msRow = (what: string, xs: number[]) => ({ what, 'median ms': median(xs).toFixed(0), runs: xs.map((x) => x.toFixed(0)).join(' ') });
    table(`Listing ${KEYS} keys, all pages of 1,000, 5 alternating runs`, [
      msRow('web API /api/files/manager (fetch + JSON)', webms),
      msRow('S3 ListObjectsV2 (presigned fetch, XML as text)', rawms),
      msRow('S3 ListObjectsV2 (SDK, parsing included)', s3ms),
    ]);
    console.log(
      `\nListObjectsV2 of ${KEYS} keys: ${median(rawms).toFixed(0)} ms over HTTP, ${median(s3ms).toFixed(0)} ms with the SDK's parsing (target < 300 ms) ${median(rawms) < 300 ? 'PASS' : 'FAIL'}`,
    );

    // Idle CPU, then 100 concurrent clients.
    // The anchor: the same service without the S3 listener, idle side by side.
    const plain = await startService(adminEnv);
    await sleep(2000);
    const t0 = ticks(svc.proc.pid!);
    const p0 = ticks(plain.proc.pid!);
    await sleep(5000);
    console.log(`idle CPU over 5 s: ${ticks(svc.proc.pid!) - t0} clock ticks with the S3 listener on, ${ticks(plain.proc.pid!) - p0} without (anchor)`);
    await plain.stop();
    const base = svc.rssMb();
    const clients = Array.from(
      { length: 100 },
      () =>
        new S3Client({
          endpoint,
          region: 'us-east-1',
          forcePathStyle: true,
          credentials: { accessKeyId: creds.access_key_id, secretAccessKey: creds.secret_access_key },
          requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: 1 }) },
        }),
    );
    let peak = base;
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        clients.map((c, i) =>
          i % 2
            ? c.send(new HeadObjectCommand({ Bucket: 'Bench', Key: 'big.bin' }))
            : c.send(new ListObjectsV2Command({ Bucket: 'Bench', Prefix: 'many/', MaxKeys: 100 })),
        ),
      );
      peak = Math.max(peak, svc.rssMb());
    }
    console.log(
      `RSS with 100 concurrent S3 clients: ${base.toFixed(0)} -> ${peak.toFixed(0)} MiB (growth ${(peak - base).toFixed(0)} MiB, target < 100 MB) ${(peak - base) * MiB < 100e6 ? 'PASS' : 'FAIL'}`,
    );
    for (const c of clients) c.destroy();
    console.log(`load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  } finally {
    nginx?.stop();
    await svc.stop();
    files.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
