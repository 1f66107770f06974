// The address rule of push destinations: no loopback, private, link-local, multicast,
// unspecified or otherwise reserved address, checked when a destination is created and again
// at every delivery (DNS can change), unless the instance allows private destinations.
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { ApiError } from "./errors.ts";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export class AddressRefused extends Error {
  override name = "AddressRefused";
}

/** True for addresses a destination may reach without DESTINATIONS_ALLOW_PRIVATE. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process() turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 it carries.
  return ipaddr.process(address).range() === "unicast";
}

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/**
 * Resolves `host` (the system resolver, /etc/hosts included) and returns the address to connect
 * to: the first one, after every one of them passed the rule. Throws AddressRefused otherwise.
 */
export async function resolveDestinationHost(
  host: string,
  allowPrivate: boolean,
): Promise<ResolvedAddress> {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(bare)) {
    addresses = [{ address: bare, family: bare.includes(":") ? 6 : 4 }];
  } else {
    try {
      addresses = (await lookup(bare, { all: true, verbatim: true })).map((a) => ({
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
          "reserved address (allowed only with DESTINATIONS_ALLOW_PRIVATE=true)",
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
    throw new ApiError("invalid_field", "url: must not contain credentials");
  }
  try {
    await resolveDestinationHost(hostOf(url), allowPrivate);
  } catch (err) {
    if (!(err instanceof AddressRefused)) throw err;
    if (/does not resolve$/.test(err.message)) return;
    throw new ApiError("invalid_field", `url: ${err.message}`);
  }
}
