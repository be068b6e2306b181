/**
 * The addresses other devices may reach this server on, for links made from
 * a page opened at a loopback address (issue 39, 15): the non-internal IPv4
 * addresses of physical interfaces, private ones first, when the listener is
 * bound to every address (or to that one). A listener bound to loopback is
 * reachable from this computer only: no address is offered then.
 */
import type { NetworkInterfaceInfo } from 'node:os';

/** VPNs, containers and VMs: reachable from this machine only, not from a phone or a colleague. */
const VIRTUAL = /^(docker|br-|veth|virbr|vmnet|vboxnet|utun|tun|tap|wg|zt|tailscale|lo)/i;

const isLoopbackHost = (h: string) => h === 'localhost' || h === '::1' || /^127\./.test(h);
const isWildcard = (h: string) => h === '' || h === '0.0.0.0' || h === '::';

function rank(name: string, a: NetworkInterfaceInfo): number {
  if (a.internal || a.family !== 'IPv4' || a.address.startsWith('169.254.') || VIRTUAL.test(name)) return -1;
  if (/^192\.168\./.test(a.address)) return 4;
  if (/^10\./.test(a.address)) return 3;
  if (/^172\.(1[6-9]|2\d|3[01])\./.test(a.address)) return 2;
  return 1;
}

export interface Reach {
  /** The listener is bound to a loopback address: nothing outside this computer reaches it. */
  loopbackOnly: boolean;
  /** `proto://address:port` per reachable address, the likeliest first. */
  urls: string[];
}

export function reachableUrls(boundHost: string, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>, port: number, proto: 'http' | 'https'): Reach {
  if (isLoopbackHost(boundHost)) return { loopbackOnly: true, urls: [] };
  const found: Array<{ address: string; score: number }> = [];
  for (const [name, addrs] of Object.entries(interfaces))
    for (const a of addrs ?? []) {
      const score = rank(name, a);
      if (score > 0 && (isWildcard(boundHost) || a.address === boundHost) && !found.some((f) => f.address === a.address))
        found.push({ address: a.address, score });
    }
  found.sort((x, y) => y.score - x.score);
  return { loopbackOnly: false, urls: found.map((f) => `${proto}://${f.address}:${port}`) };
}
