/**
 * The FTP commands (RFC 959, 2228, 2389, 2428, 3659), each a thin step over
 * the session and its gateway tree. Refusals come from the one error table
 * (replies.ts) through the session. Decisions:
 *   - no active mode (PORT / EPRT → 502): it makes the server connect out to
 *     an address the client names;
 *   - APPE and REST before STOR → refused: every upload replaces the whole
 *     file atomically through the write gate, so there is no partial file to
 *     append to or resume;
 *   - TYPE A is accepted and transfers bytes unchanged (as vsftpd does);
 *   - RNTO onto an existing name → 550 (never replaces).
 */
import { createReadStream } from 'node:fs';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../errors';
import type { GatewayEntry } from '..';
import { factsLine, ftpTime, listLine, listable } from './listing';
import type { FtpSession } from './session';

type Command = (s: FtpSession, arg: string) => void | Promise<void>;

/** Commands allowed before TLS (outside loopback) and before sign-in. */
export const PRE_LOGIN = new Set(['AUTH', 'PBSZ', 'PROT', 'FEAT', 'SYST', 'OPTS', 'NOOP', 'QUIT', 'ABOR']);

const FEATURES = ['AUTH TLS', 'PBSZ', 'PROT', 'UTF8', 'EPSV', 'PASV', 'SIZE', 'MDTM', 'REST STREAM', 'TVFS', 'MLST type*;size*;modify*;perm*;'];
const CHUNK = 1024 * 1024;

const tree = (s: FtpSession) => s.tree!;

/** Sends a readable down the data connection, then waits for the connection to close (so 226 follows the last byte). */
async function send(sock: Socket, body: Readable): Promise<void> {
  await pipeline(body, sock);
  if (sock.destroyed) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => sock.destroy(), 5000);
    sock.once('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** Lines of a listing as a stream, in batches, from an async iterable of entries. */
function lines(entries: AsyncIterable<GatewayEntry>, line: (e: GatewayEntry) => string): Readable {
  return Readable.from(
    (async function* () {
      let batch = '';
      for await (const e of entries) {
        if (!listable(e.name)) continue;
        batch += line(e) + '\r\n';
        if (batch.length > 64 * 1024) {
          yield Buffer.from(batch);
          batch = '';
        }
      }
      if (batch) yield Buffer.from(batch);
    })(),
    { objectMode: false },
  );
}

/** `LIST -la path` → `path` (clients pass ls options; a name starting with '-' is then unreachable by LIST, as on most servers). */
const withoutOptions = (arg: string) => arg.replace(/^(-[a-zA-Z]+\s*)+/, '');

async function dirOf(s: FtpSession, arg: string): Promise<{ path: string; entry: GatewayEntry }> {
  const path = s.path(arg);
  return { path, entry: await tree(s).stat(path) };
}

async function* one(e: GatewayEntry): AsyncGenerator<GatewayEntry> {
  yield e;
}

const quote = (path: string) => `"${path.replace(/"/g, '""')}"`;

async function changeDir(s: FtpSession, arg: string): Promise<void> {
  const { path, entry } = await dirOf(s, arg);
  if (entry.type !== 'dir') throw new AppError('not_found');
  s.cwd = path;
  s.reply(250, `Directory changed to ${path}`);
}

async function openPassive(s: FtpSession, extended: boolean): Promise<void> {
  await s.openPassive(extended);
}

export const COMMANDS: Record<string, Command> = {
  AUTH: (s, arg) => {
    if (s.secure) return s.reply(503, 'Already using TLS');
    if (!/^(TLS|TLS-C|SSL)$/i.test(arg.trim())) return s.reply(504, 'AUTH TLS only');
    s.startTls();
  },
  PBSZ: (s) => (s.secure ? s.reply(200, 'PBSZ=0') : s.reply(503, 'AUTH TLS first')),
  PROT: (s, arg) => {
    const level = arg.trim().toUpperCase();
    if (!s.secure) return s.reply(503, 'AUTH TLS first');
    if (level !== 'P' && level !== 'C') return s.reply(536, 'Only PROT P and PROT C');
    s.protP = level === 'P';
    s.reply(200, `Protection level set to ${level}`);
  },
  USER: (s, arg) => {
    if (s.tree) return s.reply(530, 'Already logged in');
    s.user = arg;
    s.reply(331, 'Password required');
  },
  PASS: (s, arg) => (s.tree ? s.reply(230, 'Already logged in') : s.login(arg)),
  SYST: (s) => s.reply(215, 'UNIX Type: L8'),
  FEAT: (s) => s.reply(211, 'Features:', FEATURES),
  OPTS: (s, arg) => {
    if (/^UTF-?8( ON)?$/i.test(arg.trim())) return s.reply(200, 'Always in UTF8 mode');
    if (/^MLST\b/i.test(arg.trim())) return s.reply(200, 'MLST OPTS type;size;modify;perm;');
    s.reply(501, 'Option not understood');
  },
  NOOP: (s) => s.reply(200, 'NOOP ok'),
  QUIT: (s) => s.quit(),
  ABOR: (s) => s.reply(226, 'ABOR successful'),
  ALLO: (s) => s.reply(202, 'No storage allocation necessary'),
  TYPE: (s, arg) => (/^(A( N)?|I|L 8)$/i.test(arg.trim()) ? s.reply(200, `Type set to ${arg.trim().toUpperCase()}`) : s.reply(504, 'Type not supported')),
  MODE: (s, arg) => (arg.trim().toUpperCase() === 'S' ? s.reply(200, 'Mode set to S') : s.reply(504, 'Stream mode only')),
  STRU: (s, arg) => (arg.trim().toUpperCase() === 'F' ? s.reply(200, 'Structure set to F') : s.reply(504, 'File structure only')),
  PORT: (s) => s.reply(502, 'Active mode is not supported: use passive mode (PASV or EPSV)'),
  EPRT: (s) => s.reply(502, 'Active mode is not supported: use passive mode (PASV or EPSV)'),
  PASV: (s) => openPassive(s, false),
  EPSV: (s, arg) => (arg.trim().toUpperCase() === 'ALL' ? s.reply(200, 'EPSV ALL ok') : openPassive(s, true)),
  PWD: (s) => s.reply(257, `${quote(s.cwd)} is the current directory`),
  CWD: (s, arg) => changeDir(s, arg),
  CDUP: (s) => changeDir(s, '..'),
  REST: (s, arg) => {
    if (!/^\d{1,15}$/.test(arg.trim())) return s.reply(501, 'REST needs a byte offset');
    s.rest = Number(arg.trim());
    s.reply(350, `Restarting at ${s.rest}`);
  },
  SIZE: async (s, arg) => {
    const e = await tree(s).stat(s.path(arg));
    if (e.type !== 'file') return s.reply(550, 'Not a plain file');
    s.reply(213, String(e.size));
  },
  MDTM: async (s, arg) => s.reply(213, ftpTime((await tree(s).stat(s.path(arg))).mtime)),
  MLST: async (s, arg) => {
    const { path, entry } = await dirOf(s, arg);
    s.reply(250, `Listing ${path}`, [factsLine(entry, path)]);
  },
  MLSD: async (s, arg) => {
    const { path, entry } = await dirOf(s, arg);
    if (entry.type !== 'dir') return s.reply(501, 'Not a directory');
    await s.transfer('MLSD', (sock) =>
      send(
        sock,
        lines(tree(s).list(path), (e) => factsLine(e)),
      ),
    );
  },
  LIST: async (s, arg) => {
    const { path, entry } = await dirOf(s, withoutOptions(arg));
    await s.transfer('LIST', (sock) =>
      send(
        sock,
        lines(entry.type === 'dir' ? tree(s).list(path) : one(entry), (e) => listLine(e)),
      ),
    );
  },
  NLST: async (s, arg) => {
    const { path, entry } = await dirOf(s, withoutOptions(arg));
    await s.transfer('NLST', (sock) =>
      send(
        sock,
        lines(entry.type === 'dir' ? tree(s).list(path) : one(entry), (e) => e.name),
      ),
    );
  },
  RETR: async (s, arg) => {
    const start = s.rest;
    s.rest = 0;
    const f = await tree(s).open(s.path(arg));
    if (start > f.size) return s.reply(554, 'Restart position beyond the end of the file');
    await s.transfer('RETR', async (sock, signal) => {
      const local = await f.localFile();
      const body = local
        ? createReadStream(local, { start, highWaterMark: CHUNK })
        : start >= f.size
          ? Readable.from([])
          : await f.read(start > 0 ? { start, end: f.size - 1 } : undefined, signal);
      await send(sock, body);
    });
  },
  STOR: async (s, arg) => {
    const path = s.path(arg);
    if (s.rest) {
      s.rest = 0;
      return s.reply(550, 'Resuming an upload is not supported: send the whole file');
    }
    tree(s).files.checkUnlocked(path); // a file an app holds is refused before the client sends its bytes
    await s.transfer('STOR', async (sock, signal) => {
      await tree(s).write(path, s.uploadBody(sock), { overwrite: true, signal });
    });
  },
  APPE: (s) => s.reply(502, 'APPE is not supported: uploads replace the whole file (use STOR)'),
  DELE: async (s, arg) => {
    const path = s.path(arg);
    if ((await tree(s).stat(path)).type !== 'file') return s.reply(550, 'Not a plain file: use RMD');
    await tree(s).delete(path);
    s.reply(250, 'File deleted');
  },
  MKD: async (s, arg) => {
    const path = s.path(arg);
    await tree(s).mkdir(path);
    s.reply(257, `${quote(path)} created`);
  },
  RMD: async (s, arg) => {
    const { path, entry } = await dirOf(s, arg);
    if (entry.type !== 'dir') return s.reply(550, 'Not a directory');
    for await (const _ of tree(s).list(path)) return s.reply(550, 'Directory not empty');
    await tree(s).delete(path);
    s.reply(250, 'Directory removed');
  },
  RNFR: async (s, arg) => {
    const path = s.path(arg);
    await tree(s).stat(path);
    tree(s).files.checkUnlocked(path); // refused at once, not after the client sent RNTO
    s.renameFrom = path;
    s.reply(350, 'Ready for RNTO');
  },
  RNTO: async (s, arg) => {
    const from = s.renameFrom;
    s.renameFrom = null;
    if (!from) return s.reply(503, 'RNFR first (RNTO must follow it directly)');
    await tree(s).move(from, s.path(arg), false);
    s.reply(250, 'Renamed');
  },
};

for (const [alias, name] of [
  ['XPWD', 'PWD'],
  ['XCWD', 'CWD'],
  ['XCUP', 'CDUP'],
  ['XMKD', 'MKD'],
  ['XRMD', 'RMD'],
])
  COMMANDS[alias] = COMMANDS[name];
