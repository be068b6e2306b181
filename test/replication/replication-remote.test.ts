/**
 * Replication to real remote targets: OpenSSH (SFTP) and s3rver (S3), each
 * stopped mid-run and started again, then Fix: the trees end identical by
 * sha256 and append_only paths keep their deleted files. In CI a missing
 * server fails the run.
 */
import { test } from 'node:test';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startTestServer } from '../helpers/server';
import { startSshd } from '../helpers/sshd';
import { rawS3Client, s3rverConfig, startS3rver } from '../helpers/s3rver';
import { needTool, tempDir } from '../helpers/tools';
import { faultScenario, localTree, type Tree } from '../helpers/replica';

const noSshd = needTool('sshd', 'openssh-server') ?? needTool('ssh-keygen', 'openssh-client') ?? false;
/** Changes made while the target is down (the FAULTS scenario asks for 1,000: `REPLICA_FAULT_OPS=1000`). */
const DOWN_OPS = Number(process.env.REPLICA_FAULT_OPS ?? 60);
const INTERNAL = /(^|\/)(\.service-trash|\.versions|\.service-staging|\.~fd-[^/]*)(\/|$)/;

test('local → SFTP (OpenSSH): stopped mid-run, Fix, identical trees', { skip: noSshd, timeout: 600_000 }, async () => {
  const { dir, cleanup } = tempDir('filedock-repl-sftp-');
  const sshd = await startSshd();
  const s = await startTestServer({ SERVICE_REPLICA_RETRY_BACKOFF: '200ms' });
  try {
    const root = join(sshd.dataDir, 'backup');
    mkdirSync(root);
    mkdirSync(join(dir, 'primary'));
    const token = await s.login();
    await faultScenario(
      s,
      token,
      join(dir, 'primary'),
      {
        driver: 'sftp',
        config: { host: sshd.host, port: sshd.port, user: sshd.user, private_key: sshd.clientKey, root, timeout: 5 },
        stop: () => sshd.stop(),
        start: () => sshd.start(),
        tree: async () => localTree(root),
      },
      DOWN_OPS,
    );
  } finally {
    await s.close();
    await sshd.dispose();
    cleanup();
  }
});

test('local → S3 (s3rver): stopped mid-run, Fix, identical trees', { timeout: 600_000 }, async () => {
  const { dir, cleanup } = tempDir('filedock-repl-s3-');
  const s3 = await startS3rver();
  const s = await startTestServer({ SERVICE_REPLICA_RETRY_BACKOFF: '200ms' });
  const client = rawS3Client(s3);
  try {
    mkdirSync(join(dir, 'primary'));
    const token = await s.login();
    await faultScenario(
      s,
      token,
      join(dir, 'primary'),
      {
        driver: 's3',
        config: s3rverConfig(s3, 'backup'),
        stop: () => s3.stop(),
        start: () => s3.start(),
        tree: async () => {
          const out: Tree = {};
          let token: string | undefined;
          do {
            const page = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'backup/', ContinuationToken: token }));
            for (const o of page.Contents ?? []) {
              const rel = o.Key!.slice('backup/'.length);
              if (!rel || rel.endsWith('/') || rel.split('/').pop() === '.empty' || INTERNAL.test(rel)) continue;
              const body = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: o.Key! }));
              out[rel] = createHash('sha256')
                .update(Buffer.from(await body.Body!.transformToByteArray()))
                .digest('hex');
            }
            token = page.NextContinuationToken;
          } while (token);
          return out;
        },
      },
      DOWN_OPS,
    );
  } finally {
    client.destroy();
    await s.close();
    await s3.close();
    cleanup();
  }
});
