/**
 * Which addresses a callback may connect to (docs/callbacks.md, "Addresses"): public ones only, unless
 * the callback allows its private network. Ranges as the IANA special-purpose registries list them, and
 * IPv6 forms that carry an IPv4 address checked by that address.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** [first address, prefix length, what it is] */
const V4: [string, number, string][] = [
  ['0.0.0.0', 8, 'an unspecified'],
  ['10.0.0.0', 8, 'a private'],
  ['100.64.0.0', 10, 'a shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'a loopback'],
  ['169.254.0.0', 16, 'a link-local'],
  ['172.16.0.0', 12, 'a private'],
  ['192.0.0.0', 24, 'a reserved'],
  ['192.0.2.0', 24, 'a documentation'],
  ['192.88.99.0', 24, 'a reserved'],
  ['192.168.0.0', 16, 'a private'],
  ['198.18.0.0', 15, 'a benchmarking'],
  ['198.51.100.0', 24, 'a documentation'],
  ['203.0.113.0', 24, 'a documentation'],
  ['224.0.0.0', 4, 'a multicast'],
  ['240.0.0.0', 4, 'a reserved'],
];

const V6: [string, number, string][] = [
  ['::', 128, 'an unspecified'],
  ['::1', 128, 'a loopback'],
  ['100::', 64, 'a discard'],
  ['2001::', 23, 'a reserved'],
  ['2001:db8::', 32, 'a documentation'],
  ['fc00::', 7, 'a private'],
  ['fe80::', 10, 'a link-local'],
  ['fec0::', 10, 'a reserved'],
  ['ff00::', 8, 'a multicast'],
];

/** IPv6 prefixes whose address carries an IPv4 one: mapped, NAT64, 6to4 (the IPv4 address starts at the byte given). */
const CARRIERS: [string, number, number][] = [
  ['::ffff:0:0', 96, 12],
  ['::', 96, 12],
  ['64:ff9b::', 96, 12],
  ['64:ff9b:1::', 48, 12],
  ['2002::', 16, 2],
];

function listOf(ranges: [string, number, string][], type: 'ipv4' | 'ipv6'): [BlockList, string][] {
  return ranges.map(([net, prefix, what]) => {
    const b = new BlockList();
    b.addSubnet(net, prefix, type);
    return [b, what];
  });
}

const v4 = listOf(V4, 'ipv4');
const v6 = listOf(V6, 'ipv6');
const carriers = CARRIERS.map(([net, prefix, at]) => {
  const b = new BlockList();
  b.addSubnet(net, prefix, 'ipv6');
  return { b, at };
});

/** Why `address` (an IP literal) is not public — "a private address", say — or undefined when it is. */
export function notPublic(address: string): string | undefined {
  if (isIPv4(address)) {
    const hit = v4.find(([b]) => b.check(address, 'ipv4'));
    return hit ? `${hit[1]} address` : undefined;
  }
  if (!isIPv6(address)) return 'not an IP address';
  const bare = address.split('%')[0]!;
  for (const { b, at } of carriers) {
    if (bare !== '::' && bare !== '::1' && b.check(bare, 'ipv6')) {
      const inner = ipv4At(bare, at);
      if (inner === undefined) return 'a reserved address';
      const why = notPublic(inner);
      return why ? `${why} (${inner})` : undefined;
    }
  }
  const hit = v6.find(([b]) => b.check(bare, 'ipv6'));
  return hit ? `${hit[1]} address` : undefined;
}

/** The IPv4 address in the 4 bytes of `address` from byte `at`. */
function ipv4At(address: string, at: number): string | undefined {
  const bytes = ipv6Bytes(address);
  return bytes ? Array.from(bytes.subarray(at, at + 4)).join('.') : undefined;
}

/** The 16 bytes of an IPv6 address (one with a dotted IPv4 tail too). */
function ipv6Bytes(address: string): Uint8Array | undefined {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) return undefined;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = Number.parseInt(g, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  return out;
}
