/**
 * The SFTP gateway's host key: made once (ed25519) into the data folder with
 * mode 0600 and kept, so clients that trusted it on first use keep trusting
 * it across restarts and upgrades.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import ssh2, { type ParsedKey } from 'ssh2';
import { sshFingerprint } from '../../auth/ssh-keys';

// ssh2 is CommonJS: only some of its names are visible as ESM named exports.
const { utils } = ssh2;

export interface HostKey {
  /** The private key in OpenSSH format, for ssh2's `hostKeys`. */
  private: string;
  /** `ssh-ed25519 AAAA…`, for a client's known_hosts. */
  publicLine: string;
  /** `SHA256:…` as OpenSSH prints it when it asks to trust a host. */
  fingerprint: string;
}

/** ssh2's generator makes an ed25519 key it cannot parse back about once in 256 (it strips a public key's leading zero byte). */
const GENERATE_TRIES = 16;

type Generate = () => { private: string; public: string };

/** A new key in OpenSSH format that parses back, private and public half alike. */
export function freshHostKey(generate: Generate = () => utils.generateKeyPairSync('ed25519', { comment: 'filedock-sftp' })): string {
  for (let i = 0; i < GENERATE_TRIES; i++) {
    const made = generate();
    if (!(utils.parseKey(made.private) instanceof Error) && !(utils.parseKey(made.public) instanceof Error)) return made.private;
  }
  throw new Error(`no parseable ed25519 host key in ${GENERATE_TRIES} tries`);
}

/** The host key at `path`, made on first call. A file that is not a key → throws (never silently replaced). */
export function loadHostKey(path: string, generate?: Generate): HostKey {
  if (!existsSync(path)) {
    // Written whole under another name first: a crash never leaves half a key.
    writeFileSync(`${path}.tmp`, freshHostKey(generate), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  }
  chmodSync(path, 0o600);
  const text = readFileSync(path, 'utf8');
  const key = utils.parseKey(text);
  if (key instanceof Error) throw new Error(`the SFTP host key ${path} is unreadable (${key.message}); remove it and restart to make a new one`);
  const one = (Array.isArray(key) ? key[0] : key) as ParsedKey;
  return { private: text, publicLine: `${one.type} ${one.getPublicSSH().toString('base64')}`, fingerprint: sshFingerprint(one.getPublicSSH()) };
}
