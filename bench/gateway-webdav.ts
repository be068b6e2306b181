/**
 * The WebDAV gateway against its anchors, in one run, alternating, medians:
 *   - GET of a big file with curl: /dav/ against `rclone serve webdav` of the
 *     same folder (target >= 100 %);
 *   - PUT of the same size with curl -T: /dav/ against nginx's WebDAV PUT
 *     (target >= 90 %);
 *   - PROPFIND depth 1 of a 10,000-entry folder: against rclone (faster);
 *   - a 100,000-entry PROPFIND depth 1: time and the server's RSS growth
 *     (streamed: it must not hold the body);
 *   - RSS added by 100 concurrent clients (target < 100 MB) and the CPU
 *     ticks of the idle server over 5 s (target 0).
 *
 *   npm run bench -- gateway-webdav      (BENCH_MIB=2048, BENCH_RUNS=3, BENCH_BIG=100000)
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { ensureBuilt, freePort, median, noise, sleep, startNginx, startService, table } from './lib';
import { tempDir } from '../test/helpers/tools';

const run = promisify(execFile);
const MiB = 1 << 20;
const BYTES = Number(process.env.BENCH_MIB ?? 2048) * MiB;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BIG = Number(process.env.BENCH_BIG ?? 100_000);
const ADMIN = { email: 'admin@example.test', password: 'admin-password-1' };
const USER = `${ADMIN.email}:${ADMIN.password}`;
const t0 = Date.now();
const log = (m: string) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${m}`);

/** Seconds curl takes for one request (body to /dev/null). */
function curlTime(args: string[]): number {
  const out = execFileSync('curl', ['-s', '-f', '-o', '/dev/null', '-w', '%{time_total}', ...args], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return Number(out);
}

const propfind = (url: string, user: string) => curlTime(['-u', user, '-X', 'PROPFIND', '-H', 'Depth: 1', url]);
const cpuTicks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
};

async function main(): Promise<void> {
  ensureBuilt();
  const t = tempDir('filedock-bench-dav-');
  const files = join(t.dir, 'files');
  mkdirSync(join(files, 'ten'), { recursive: true });
  mkdirSync(join(files, 'big'), { recursive: true });
  mkdirSync(join(files, 'small'), { recursive: true });
  for (let i = 0; i < 10_000; i++) writeFileSync(join(files, 'ten', `file-${String(i).padStart(5, '0')}.txt`), 'x');
  for (let i = 0; i < BIG; i++) writeFileSync(join(files, 'big', `f${i}.txt`), '');
  for (let i = 0; i < 20; i++) writeFileSync(join(files, 'small', `s${i}.txt`), 's'.repeat(1000));
  await pipeline(noise(BYTES), createWriteStream(join(files, 'blob.bin')));
  const upSrc = join(t.dir, 'up.bin');
  await pipeline(noise(BYTES), createWriteStream(upSrc));

  log('files made');
  const svc = await startService({ SERVICE_ADMIN_EMAIL: ADMIN.email, SERVICE_ADMIN_PASSWORD: ADMIN.password });
  const login = await (
    await fetch(`${svc.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
  ).json();
  const made = await fetch(`${svc.url}/api/admin/storages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` },
    body: JSON.stringify({ name: 'Box', driver: 'local', config: { path: files } }),
  });
  if (made.status !== 200) throw new Error(`storage: ${made.status} ${await made.text()}`);
  const dav = `${svc.url}/dav/Box`;
  log('service up; waiting for the catalogue');
  // Wait until the catalogue holds the big folder.
  for (let i = 0; i < 300; i++) {
    const l = await fetch(`${svc.url}/api/files/manager?path=/Box/big&limit=1`, { headers: { authorization: `Bearer ${login.token}` } });
    if (l.status === 200 && ((await l.json()) as { total: number }).total >= BIG) break;
    await sleep(500);
  }
  log(`catalogued; RSS ${svc.rssMb().toFixed(0)} MB`);

  const rcPort = await freePort();
  const rc = spawn('rclone', ['serve', 'webdav', files, '--addr', `127.0.0.1:${rcPort}`, '--user', 'u', '--pass', 'p', '--log-level', 'ERROR'], {
    stdio: 'ignore',
  });
  const rcUrl = `http://127.0.0.1:${rcPort}`;
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(rcUrl + '/');
      break;
    } catch {
      await sleep(20);
    }
  }
  // nginx's worker runs unprivileged: its folder lives outside our 0700 temp dir.
  const ng = tempDir('filedock-bench-nginx-');
  mkdirSync(join(ng.dir, 'dav'));
  mkdirSync(join(ng.dir, 'tmp'));
  execFileSync('chmod', ['-R', '777', ng.dir]);
  const nginx = await startNginx(
    ng.dir,
    `location /dav/ { dav_methods PUT; client_max_body_size 0; client_body_buffer_size 1m; client_body_temp_path ${join(ng.dir, 'tmp')}; }`,
  );

  try {
    execFileSync('sh', ['-c', 'cat "$1" "$2" > /dev/null', 'sh', join(files, 'blob.bin'), upSrc]);
    // The 100k-entry PROPFIND first, before other work grows the heap; curl runs async so the sampler runs.
    await sleep(1000);
    const before = svc.rssMb();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, svc.rssMb())), 10);
    const bigS = Number(
      (await run('curl', ['-s', '-f', '-o', '/dev/null', '-w', '%{time_total}', '-u', USER, '-X', 'PROPFIND', '-H', 'Depth: 1', `${dav}/big/`])).stdout,
    );
    clearInterval(sampler);
    const bigGrowth = peak - before;
    log(`RSS ${svc.rssMb().toFixed(0)} MB after the big PROPFIND`);
    const get = { ours: [] as number[], rclone: [] as number[] };
    const put = { ours: [] as number[], nginx: [] as number[] };
    const pf = { ours: [] as number[], rclone: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      get.rclone.push(curlTime(['-u', 'u:p', `${rcUrl}/blob.bin`]));
      get.ours.push(curlTime(['-u', USER, `${dav}/blob.bin`]));
      if (nginx) put.nginx.push(curlTime(['-T', upSrc, `${nginx.url}/dav/up-${i}.bin`]));
      put.ours.push(curlTime(['-u', USER, '-T', upSrc, `${dav}/up-${i}.bin`]));
    }
    log(`RSS ${svc.rssMb().toFixed(0)} MB after GETs and PUTs`);
    for (let i = 0; i < 7; i++) {
      pf.rclone.push(propfind(`${rcUrl}/ten/`, 'u:p'));
      pf.ours.push(propfind(`${dav}/ten/`, USER));
    }

    // 100 concurrent clients, each on its own connection: PROPFIND and GETs in a loop.
    const auth = 'Basic ' + Buffer.from(USER).toString('base64');
    const agents = Array.from({ length: 100 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const one = (agent: Agent, method: string, path: string) =>
      new Promise<void>((resolve, reject) => {
        const r = request(`${dav}${path}`, { agent, method, headers: { authorization: auth, depth: '1' } }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        r.on('error', reject);
        r.end();
      });
    await sleep(1000);
    const rssBase = svc.rssMb();
    let rssPeak = rssBase;
    const s2 = setInterval(() => (rssPeak = Math.max(rssPeak, svc.rssMb())), 20);
    await Promise.all(
      agents.map(async (a) => {
        for (let k = 0; k < 10; k++) {
          await one(a, 'PROPFIND', '/small/');
          await one(a, 'GET', `/small/s${k}.txt`);
        }
      }),
    );
    clearInterval(s2);
    for (const a of agents) a.destroy();
    await sleep(5000);
    const c0 = cpuTicks(svc.proc.pid!);
    await sleep(5000);
    const idleTicks = cpuTicks(svc.proc.pid!) - c0;
    const mbps = (s: number[]) => Math.round(BYTES / median(s) / 1e6);
    const ms = (s: number[]) => Math.round(median(s) * 1000);
    table(
      `WebDAV, ${BYTES / MiB} MiB files, ${RUNS} runs (medians); machine shared (load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
      [
        {
          measure: 'GET (curl)',
          filedock: `${mbps(get.ours)} MB/s`,
          anchor: `rclone ${mbps(get.rclone)} MB/s`,
          ratio: `${Math.round((median(get.rclone) / median(get.ours)) * 100)} %`,
          target: '>= 100 %',
        },
        {
          measure: 'PUT (curl -T)',
          filedock: `${mbps(put.ours)} MB/s`,
          anchor: nginx ? `nginx ${mbps(put.nginx)} MB/s` : 'nginx missing',
          ratio: nginx ? `${Math.round((median(put.nginx) / median(put.ours)) * 100)} %` : '-',
          target: '>= 90 %',
        },
        {
          measure: 'PROPFIND depth 1, 10,000 entries',
          filedock: `${ms(pf.ours)} ms`,
          anchor: `rclone ${ms(pf.rclone)} ms`,
          ratio: `${Math.round((median(pf.ours) / median(pf.rclone)) * 100)} % of the time`,
          target: 'faster',
        },
        {
          measure: `PROPFIND depth 1, ${BIG} entries`,
          filedock: `${Math.round(bigS * 1000)} ms`,
          anchor: '-',
          ratio: `RSS +${bigGrowth.toFixed(0)} MB while serving`,
          target: 'streamed',
        },
        {
          measure: '100 concurrent clients',
          filedock: `RSS +${(rssPeak - rssBase).toFixed(0)} MB`,
          anchor: `base ${rssBase.toFixed(0)} MB`,
          ratio: '-',
          target: '< 100 MB',
        },
        { measure: 'idle CPU over 5 s', filedock: `${idleTicks} ticks`, anchor: '-', ratio: '-', target: '0' },
      ],
    );
  } finally {
    rc.kill('SIGTERM');
    nginx?.stop();
    await svc.stop();
    t.cleanup();
    ng.cleanup();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
