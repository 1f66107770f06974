// A small GeoIP database in MaxMind's format (the MaxMind DB file format, version 2.0), written
// here from a list of networks, so that tests need nothing downloaded. IPv6 tree of 24-bit
// records; IPv4 networks sit under ::/96, where readers look for them. Records are laid out as
// GeoLite2 Country's: `{ continent, country: { iso_code, names } }`.
import ipaddr from "ipaddr.js";

/** A value of the format's data section. */
type Value =
  | { t: "string"; v: string }
  | { t: "uint16" | "uint32" | "uint64"; v: bigint }
  | { t: "map"; v: [string, Value][] }
  | { t: "array"; v: Value[] };

const str = (v: string): Value => ({ t: "string", v });
const map = (v: Record<string, Value>): Value => ({ t: "map", v: Object.entries(v) });

// Type numbers of the format; those over 7 are "extended" (written after a zero type).
const TYPES = { string: 2, uint16: 5, uint32: 6, map: 7, uint64: 9, array: 11 } as const;

function control(type: number, size: number): number[] {
  const out: number[] = [];
  let sizeBits: number;
  const extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 285) [sizeBits, extra[0]] = [29, size - 29];
  else if (size < 65821) {
    sizeBits = 30;
    extra.push((size - 285) >> 8, (size - 285) & 0xff);
  } else {
    sizeBits = 31;
    const n = size - 65821;
    extra.push((n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
  }
  if (type <= 7) out.push((type << 5) | sizeBits);
  else out.push(sizeBits, type - 7);
  return [...out, ...extra];
}

function encode(value: Value): number[] {
  switch (value.t) {
    case "string": {
      const bytes = [...new TextEncoder().encode(value.v)];
      return [...control(TYPES.string, bytes.length), ...bytes];
    }
    case "uint16":
    case "uint32":
    case "uint64": {
      const bytes: number[] = [];
      for (let n = value.v; n > 0n; n >>= 8n) bytes.unshift(Number(n & 0xffn));
      return [...control(TYPES[value.t], bytes.length), ...bytes];
    }
    case "map":
      return [
        ...control(TYPES.map, value.v.length),
        ...value.v.flatMap(([k, v]) => [...encode(str(k)), ...encode(v)]),
      ];
    case "array":
      return [...control(TYPES.array, value.v.length), ...value.v.flatMap(encode)];
  }
}

/** The 128 bits of an address (IPv4 as ::a.b.c.d) and the network's prefix in that tree. */
function networkBits(cidr: string): { bits: number[]; prefix: number } {
  const [address, length] = ipaddr.parseCIDR(cidr);
  const bytes = address.kind() === "ipv4"
    ? [...new Array(12).fill(0), ...address.toByteArray()]
    : address.toByteArray();
  const bits = bytes.flatMap((b) => Array.from({ length: 8 }, (_, i) => (b >> (7 - i)) & 1));
  return { bits, prefix: address.kind() === "ipv4" ? 96 + length : length };
}

interface Node {
  children: [Node | number | null, Node | number | null];
}

/**
 * The bytes of a database mapping each network (CIDR) to a country code; later networks win
 * where they overlap earlier ones only if they are more specific (insert broad ones first).
 */
export function buildCountryDatabase(networks: Record<string, string>): Uint8Array {
  // Data section: one record per country, shared by its networks.
  const data: number[] = [];
  const offsets = new Map<string, number>();
  for (const country of new Set(Object.values(networks))) {
    offsets.set(country, data.length);
    data.push(
      ...encode(map({
        continent: map({ code: str("XX") }),
        country: map({ iso_code: str(country), names: map({ en: str(`Country ${country}`) }) }),
      })),
    );
  }

  const root: Node = { children: [null, null] };
  for (const [cidr, country] of Object.entries(networks)) {
    const { bits, prefix } = networkBits(cidr);
    let node = root;
    for (let depth = 0; depth < prefix - 1; depth++) {
      const bit = bits[depth]!;
      let next = node.children[bit];
      if (typeof next !== "object" || next === null) {
        // A data record met on the way is pushed down into both halves.
        const inherited = typeof next === "number" ? next : null;
        next = { children: [inherited, inherited] };
        node.children[bit] = next;
      }
      node = next;
    }
    node.children[bits[prefix - 1]!] = offsets.get(country)!;
  }

  // Number the nodes breadth first, root 0.
  const order: Node[] = [root];
  for (let i = 0; i < order.length; i++) {
    for (const child of order[i]!.children) {
      if (child !== null && typeof child === "object") order.push(child);
    }
  }
  const index = new Map(order.map((n, i) => [n, i]));
  const nodeCount = order.length;
  const tree: number[] = [];
  for (const node of order) {
    for (const child of node.children) {
      const record = child === null
        ? nodeCount // no data
        : typeof child === "number"
        ? nodeCount + 16 + child // into the data section, after its 16-byte separator
        : index.get(child)!;
      tree.push((record >> 16) & 0xff, (record >> 8) & 0xff, record & 0xff);
    }
  }

  const u16 = (v: number): Value => ({ t: "uint16", v: BigInt(v) });
  const metadata = map({
    node_count: { t: "uint32", v: BigInt(nodeCount) },
    record_size: u16(24),
    ip_version: u16(6),
    database_type: str("Test-Country"),
    languages: { t: "array", v: [str("en")] },
    binary_format_major_version: u16(2),
    binary_format_minor_version: u16(0),
    build_epoch: { t: "uint64", v: 1_767_225_600n },
    description: map({ en: str("Networks for tests, written by tests/helpers/mmdb.ts") }),
  });
  const marker = [0xab, 0xcd, 0xef, ...new TextEncoder().encode("MaxMind.com")];
  return new Uint8Array([
    ...tree,
    ...new Array(16).fill(0),
    ...data,
    ...marker,
    ...encode(metadata),
  ]);
}

/** Writes the database to a new temporary file; returns its path. */
export async function writeCountryDatabase(networks: Record<string, string>): Promise<string> {
  const path = await Deno.makeTempFile({ prefix: "geoip-test-", suffix: ".mmdb" });
  await Deno.writeFile(path, buildCountryDatabase(networks));
  return path;
}
