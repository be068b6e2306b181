/**
 * Real servers and tools the tests need. In CI (`CI=true`) a missing tool is a
 * failure; on a developer machine the test skips with the apt package to install.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';

export function hasTool(bin: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Returns a skip reason (string) when `bin` is missing outside CI, null when present.
 * Throws in CI so a missing server fails the run instead of passing by skipping.
 */
export function needTool(bin: string, aptPackage: string): string | null {
  if (hasTool(bin)) return null;
  const msg = `${bin} not found: install it with "apt-get install ${aptPackage}"`;
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`[CI] ${msg}`);
  return msg;
}

/** A fresh temp dir removed by the returned cleanup. */
export function tempDir(prefix = 'filedock-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A free TCP port on 127.0.0.1, for servers that cannot bind port 0 themselves. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A fresh OpenSSH `ssh-ed25519` public key line (string type, string key: RFC 8709). */
export function sshKeyLine(comment = 'test@test'): string {
  const raw = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([str(Buffer.from('ssh-ed25519')), str(raw)]).toString('base64')} ${comment}`;
}
