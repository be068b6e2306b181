/**
 * Client addresses: which peers are trusted proxies (their `X-Forwarded-For`
 * is believed), the client address a request stands for, and which addresses
 * count as the local network (exempt from the public egress budget).
 */
import { BlockList, isIP } from 'node:net';

const LOOPBACK_RANGES = ['127.0.0.0/8', '::1/128'];
/** RFC 1918, IPv6 unique-local and link-local: the LAN a desktop sits on. */
const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', 'fc00::/7', 'fe80::/10'];

/** `::ffff:1.2.3.4` → `1.2.3.4`; anything else unchanged. */
export const plainAddress = (ip: string): string => ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

function add(list: BlockList, entry: string): boolean {
  const [addr, bits] = entry.split('/');
  const family = isIP(addr);
  if (!family) return false;
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (bits === undefined) list.addAddress(addr, type);
  else {
    const n = Number(bits);
    if (!/^\d+$/.test(bits) || n > (family === 6 ? 128 : 32)) return false;
    list.addSubnet(addr, n, type);
  }
  return true;
}

/**
 * Parses a comma list of addresses and CIDR ranges (`loopback`, `private`
 * and `none` are names for sets); null names the first bad entry.
 */
export function parseAddressList(raw: string): { list: BlockList; bad: string | null } {
  const list = new BlockList();
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    if (entry === 'none') continue;
    const set = entry === 'loopback' ? LOOPBACK_RANGES : entry === 'private' ? PRIVATE_RANGES : [entry];
    for (const e of set) if (!add(list, e)) return { list, bad: entry };
  }
  return { list, bad: null };
}

export const inList = (list: BlockList, ip: string): boolean => {
  const a = plainAddress(ip);
  const family = isIP(a);
  return family !== 0 && list.check(a, family === 6 ? 'ipv6' : 'ipv4');
};

const lan = parseAddressList([...LOOPBACK_RANGES, ...PRIVATE_RANGES].join(',')).list;
/** Loopback or a private range (the LAN), never a public address. */
export const isLanAddress = (ip: string): boolean => inList(lan, ip);

/**
 * The address a request stands for: the direct peer, unless the peer is a
 * trusted proxy; then `X-Forwarded-For` is read right to left, skipping
 * trusted hops, and the first untrusted address is the client. A forged
 * header from an untrusted peer is never read.
 */
export function clientAddress(peer: string, xff: string, trusted: BlockList): string {
  let ip = plainAddress(peer);
  if (!xff || !inList(trusted, ip)) return ip;
  const hops = xff
    .split(',')
    .map((h) => plainAddress(h.trim()))
    .filter((h) => isIP(h));
  for (let i = hops.length - 1; i >= 0; i--) {
    ip = hops[i];
    if (!inList(trusted, ip)) break;
  }
  return ip;
}
