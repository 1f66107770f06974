// The address rule of push destinations, on its own: every IPv6 form that carries an IPv4
// address (mapped, compatible, SIIT, NAT64, 6to4, Teredo) is judged by that IPv4, as typed in a
// URL and as the resolver returns it. The HTTP side is in destinations_test.ts.
import assert from "node:assert/strict";
import {
  AddressRefused,
  assertDestinationUrl,
  isPublicAddress,
  resolveDestinationHost,
} from "../services/destinations/url.ts";
import { ApiError } from "../services/errors.ts";

/** [the address as written, what it carries] for forms that reach a non-public IPv4. */
const REFUSED: [string, string][] = [
  ["::127.0.0.1", "IPv4-compatible loopback"],
  ["::7f00:1", "the same, as a URL or a resolver writes it"],
  ["::a9fe:a9fe", "IPv4-compatible 169.254.169.254 (cloud metadata)"],
  ["::10.0.0.1", "IPv4-compatible private"],
  ["::c0a8:101", "IPv4-compatible 192.168.1.1"],
  ["::2", "IPv4-compatible 0.0.0.2 (this network)"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
  ["::ffff:a9fe:a9fe", "IPv4-mapped link-local"],
  ["::ffff:0:7f00:1", "SIIT (RFC 6145) loopback"],
  ["::ffff:0:a00:1", "SIIT private"],
  ["64:ff9b::127.0.0.1", "NAT64 well-known prefix, loopback"],
  ["64:ff9b::a9fe:a9fe", "NAT64 well-known prefix, link-local"],
  ["64:ff9b::c0a8:1", "NAT64 well-known prefix, 192.168.0.1"],
  ["64:ff9b:1:7f00:0:100::", "NAT64 local-use prefix split at /48: 127.0.0.1"],
  ["64:ff9b:1:a:0:1::", "NAT64 local-use prefix split at /56: 10.0.0.1"],
  ["64:ff9b:1:0:a:0:100:0", "NAT64 local-use prefix split at /64: 10.0.0.1"],
  ["64:ff9b:1::a00:1", "NAT64 local-use prefix split at /96: 10.0.0.1"],
  ["2002:7f00:1::1", "6to4 of 127.0.0.1"],
  ["2002:a9fe:a9fe::1", "6to4 of 169.254.169.254"],
  ["2002:c0a8:101:1::1", "6to4 of 192.168.1.1"],
  ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo, client 10.0.0.1 (inverted)"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo, client 127.0.0.1 (inverted)"],
  ["2001:0:a00:1:8000:63bf:f7f7:f7f7", "Teredo, server 10.0.0.1"],
  // The plain forms, for comparison.
  ["127.0.0.1", "loopback"],
  ["169.254.169.254", "link-local"],
  ["::1", "IPv6 loopback"],
  ["::", "unspecified"],
  ["fe80::1", "IPv6 link-local"],
  ["fd00::1", "IPv6 unique local"],
  ["2001:db8::1", "IPv6 documentation"],
];

/** Forms that carry a public IPv4, and plain public addresses: a destination may reach them. */
const ALLOWED: [string, string][] = [
  ["8.8.8.8", "public IPv4"],
  ["2001:4860:4860::8888", "public IPv6"],
  ["64:ff9b::808:808", "NAT64 of 8.8.8.8 (what DNS64 answers on an IPv6-only network)"],
  ["64:ff9b:1::808:808", "NAT64 local-use prefix at /96, 8.8.8.8"],
  ["64:ff9b:1:0:8:808:800:0", "NAT64 local-use prefix at /64, 8.8.8.8"],
  ["2002:808:808::1", "6to4 of 8.8.8.8"],
  ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", "Teredo, server 65.54.227.120, client 8.8.8.8"],
  ["::ffff:8.8.8.8", "IPv4-mapped 8.8.8.8"],
];

Deno.test("isPublicAddress: an IPv6 form carrying a private, loopback or link-local IPv4 is refused", () => {
  for (const [address, what] of REFUSED) {
    assert.equal(isPublicAddress(address), false, `${address}: ${what}`);
  }
  for (const [address, what] of ALLOWED) {
    assert.equal(isPublicAddress(address), true, `${address}: ${what}`);
  }
  for (const junk of ["", "not an address", "::g", "1::2::3"]) {
    assert.equal(isPublicAddress(junk), false, junk);
  }
});

Deno.test("resolveDestinationHost: bracketed literals and resolved names go through the same rule", async () => {
  for (const [address, what] of REFUSED) {
    // As a URL gives the host: brackets, and IPv6 written the WHATWG way (::7f00:1).
    const host = new URL(`http://${address.includes(":") ? `[${address}]` : address}/`).hostname;
    await assert.rejects(
      () => resolveDestinationHost(host, false),
      AddressRefused,
      `${host}: ${what}`,
    );
    // Allowed on an instance that allows private destinations.
    assert.ok(await resolveDestinationHost(host, true));
  }
  for (const [address] of ALLOWED) {
    const host = new URL(`http://${address.includes(":") ? `[${address}]` : address}/`).hostname;
    assert.equal((await resolveDestinationHost(host, false)).family, address.includes(":") ? 6 : 4);
  }
  // A name is resolved, and every address it resolves to is checked.
  await assert.rejects(
    () => resolveDestinationHost("localhost", false),
    (err: Error) =>
      err instanceof AddressRefused && /resolves to (127\.0\.0\.1|::1)/.test(err.message),
  );
});

Deno.test("resolveDestinationHost: a name with a public and a private address, or one that rebinds, is refused", async () => {
  // A resolver standing in for DNS: what each lookup of the name answers, in turn.
  const answers = (...rounds: string[][]) => {
    let round = 0;
    return (_host: string) =>
      Promise.resolve(
        rounds[Math.min(round++, rounds.length - 1)]!.map((address) => ({
          address,
          family: address.includes(":") ? 6 : 4,
        })),
      );
  };
  // One public address and one private one, in either order: refused, naming the private one.
  for (const order of [["8.8.8.8", "10.0.0.5"], ["2001:4860:4860::8888", "192.168.1.1"]]) {
    await assert.rejects(
      () => resolveDestinationHost("mixed.example", false, answers(order)),
      (err: Error) =>
        err instanceof AddressRefused && /resolves to (10\.0\.0\.5|192\.168)/.test(err.message),
    );
  }
  await assert.rejects(
    () => resolveDestinationHost("mixed.example", false, answers(["10.0.0.5", "8.8.8.8"])),
    AddressRefused,
  );
  // DNS rebinding: public when the destination was created, private at the next delivery's
  // check, then public again. Each check resolves anew and judges what it got.
  const rebinding = answers(["8.8.8.8"], ["169.254.169.254"], ["8.8.4.4"]);
  assert.deepEqual(await resolveDestinationHost("rebind.example", false, rebinding), {
    address: "8.8.8.8",
    family: 4,
  });
  await assert.rejects(
    () => resolveDestinationHost("rebind.example", false, rebinding),
    (err: Error) => err instanceof AddressRefused && /169\.254\.169\.254/.test(err.message),
  );
  assert.equal(
    (await resolveDestinationHost("rebind.example", false, rebinding)).address,
    "8.8.4.4",
  );
  // The address connected to is the one checked (the first), never a fresh lookup's.
  const v6first = answers(["2001:4860:4860::8844", "8.8.8.8"]);
  assert.deepEqual(await resolveDestinationHost("dual.example", false, v6first), {
    address: "2001:4860:4860::8844",
    family: 6,
  });
});

Deno.test("assertDestinationUrl: the IPv6 forms are 400 invalid_field naming the url", async () => {
  for (const url of ["http://[::127.0.0.1]/", "https://[::a9fe:a9fe]/latest/meta-data"]) {
    await assert.rejects(
      () => assertDestinationUrl(url, false),
      (err: Error) =>
        err instanceof ApiError && err.code === "invalid_field" &&
        /^url: \S+ resolves to \S+, a loopback, private/.test(err.message),
      url,
    );
  }
});
