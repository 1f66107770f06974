// The address rule of push destinations: no loopback, private, link-local, multicast,
// unspecified or otherwise reserved address, checked when a destination is created and again
// at every delivery (DNS can change), unless the instance allows private destinations.
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { ApiError } from "../errors.ts";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export class AddressRefused extends Error {
  override name = "AddressRefused";
}

/**
 * True for addresses a destination may reach without DESTINATIONS_ALLOW_PRIVATE: plain unicast
 * by ipaddr.js's range table. An IPv6 address that carries an IPv4 one (see embeddedIPv4) is
 * judged by the IPv4 it carries, so `[::127.0.0.1]` or `[64:ff9b::a9fe:a9fe]` is refused like
 * 127.0.0.1 or 169.254.169.254, the hosts those forms reach through a translator or tunnel.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.parse(address);
  if (ip.kind() === "ipv4") return ip.range() === "unicast";
  const carried = embeddedIPv4(ip as ipaddr.IPv6);
  if (carried) return carried.every((v4) => v4.range() === "unicast");
  return ip.range() === "unicast";
}

// The forms that embed an IPv4 address, by ipaddr.js's range names where it has them:
// - ipv4Mapped ::ffff:a.b.c.d and rfc6145 ::ffff:0:a.b.c.d (SIIT): the last 32 bits;
// - IPv4-compatible ::a.b.c.d (RFC 4291, deprecated; ipaddr.js calls it plain unicast): the last
//   32 bits. (ipaddr.js even parses the text "::a.b.c.d" as ::ffff:a.b.c.d: judged alike.)
// - rfc6052 NAT64: 64:ff9b::/96, the last 32 bits; the local-use 64:ff9b:1::/48, whose
//   operator may use it at /48, /56, /64 or /96 (see nat64LocalUse);
// - 6to4 2002:AABB:CCDD::/48: bits 16-47;
// - teredo 2001:0::/32: the server's IPv4 in bits 32-63 and the client's, inverted, in the last
//   32 bits; both must be public.
const IPV4_COMPATIBLE = ipaddr.parseCIDR("::/96");
const NAT64_WELL_KNOWN = ipaddr.parseCIDR("64:ff9b::/96");
const v4 = (bytes: number[]) => new ipaddr.IPv4(bytes);

/** The IPv4 addresses an IPv6 address carries, or null for one that carries none. */
export function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const b = ip.toByteArray();
  switch (ip.range()) {
    case "ipv4Mapped":
    case "rfc6145":
      return [v4(b.slice(12, 16))];
    case "rfc6052":
      return ip.match(NAT64_WELL_KNOWN) ? [v4(b.slice(12, 16))] : nat64LocalUse(b);
    case "6to4":
      return [v4(b.slice(2, 6))];
    case "teredo":
      return [v4(b.slice(4, 8)), v4(b.slice(12, 16).map((x) => x ^ 0xff))];
    case "unicast":
      return ip.match(IPV4_COMPATIBLE) ? [v4(b.slice(12, 16))] : null;
    default:
      return null;
  }
}

/**
 * The IPv4 readings of an address in NAT64's local-use 64:ff9b:1::/48. Its operator picks the
 * prefix length, which the address does not tell; RFC 6052 lays the IPv4 out differently for
 * each (skipping bits 64-71, which are zero, as is everything after the IPv4). Every layout the
 * address fits is a reading, and each must be public.
 */
function nat64LocalUse(b: number[]): ipaddr.IPv4[] {
  const zeroFrom = (i: number) => b.slice(i).every((x) => x === 0);
  const readings = [v4(b.slice(12, 16))]; // /96
  if (b[8] === 0) {
    if (zeroFrom(13)) readings.push(v4(b.slice(9, 13))); // /64
    if (zeroFrom(12)) readings.push(v4([b[7]!, b[9]!, b[10]!, b[11]!])); // /56
    if (zeroFrom(11)) readings.push(v4([b[6]!, b[7]!, b[9]!, b[10]!])); // /48
  }
  return readings;
}

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** A host name's addresses, as node:dns's lookup with `all` answers them. */
export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: Resolve = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolves `host` (the system resolver, /etc/hosts included, unless `resolve` is given) and
 * returns the address to connect to: the first one, after every one of them passed the rule.
 * Throws AddressRefused otherwise. Nothing is remembered between calls: a name that resolved to
 * a public address once and to a private one now (DNS rebinding) is refused now.
 */
export async function resolveDestinationHost(
  host: string,
  allowPrivate: boolean,
  resolve: Resolve = systemResolve,
): Promise<ResolvedAddress> {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(bare)) {
    addresses = [{ address: bare, family: bare.includes(":") ? 6 : 4 }];
  } else {
    try {
      addresses = (await resolve(bare)).map((a) => ({
        address: a.address,
        family: a.family === 6 ? 6 : 4,
      }));
    } catch (err) {
      // EPERM is a missing --allow-net, the deployment's fault: it must not read as a bad name.
      if ((err as { code?: string }).code === "EPERM") throw err;
      throw new AddressRefused(`${bare} does not resolve`);
    }
  }
  if (addresses.length === 0) throw new AddressRefused(`${bare} does not resolve`);
  if (!allowPrivate) {
    // Every address must pass: a name with one public and one private address is refused,
    // since another resolver could hand out the private one.
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) {
      throw new AddressRefused(
        `${bare} resolves to ${bad.address}, a loopback, private, link-local, multicast or ` +
          "reserved address, or an IPv6 form of one (allowed only with " +
          "DESTINATIONS_ALLOW_PRIVATE=true)",
      );
    }
  }
  return addresses[0]!;
}

/**
 * The creation check: shape (http(s), no credentials) and address. A name that does not
 * resolve now is accepted (DNS may not be set up yet); every delivery checks it again.
 */
export async function assertDestinationUrl(raw: string, allowPrivate: boolean): Promise<void> {
  const url = new URL(raw);
  if (url.username || url.password) {
    throw new ApiError("invalid_field", "url: must not contain credentials", { field: "url" });
  }
  try {
    await resolveDestinationHost(hostOf(url), allowPrivate);
  } catch (err) {
    if (!(err instanceof AddressRefused)) throw err;
    if (/does not resolve$/.test(err.message)) return;
    throw new ApiError("invalid_field", `url: ${err.message}`, { field: "url" });
  }
}
