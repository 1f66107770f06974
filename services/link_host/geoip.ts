// The country of a link-host visitor (CONTRACT, "Analytics"), from an offline GeoIP database in
// MaxMind's format (GeoLite2 Country or City, GeoIP2, or any database laid out like them) named
// by GEOIP_DATABASE, read with mmdb-lib (MIT). The address is looked up here and goes no further:
// only the country leaves this module, and nothing here logs.
import { Buffer } from "node:buffer";
import ipaddr from "ipaddr.js";
import { type CountryResponse, Reader } from "mmdb-lib";
import { ByteCache } from "../../infra/byte_cache.ts";
import { isoCountry } from "../events/geo.ts";
import type { Logger } from "../../infra/log.ts";

/** The file cannot be read or is not a MaxMind database. */
export class GeoIpError extends Error {
  override name = "GeoIpError";
}

/** What a country lookup needs: the link host takes any implementation. */
export interface CountryLookup {
  /** The ISO 3166-1 alpha-2 code of the address's country, or null when unknown. */
  country(address: string): string | null;
}

interface Loaded {
  reader: Reader<CountryResponse>;
  /** Modification time and size when read: a change means a new file. */
  stamp: string;
  databaseType: string;
  builtAt: Date;
}

function stampOf(info: Deno.FileInfo): string {
  return `${info.mtime?.getTime() ?? 0}:${info.size}`;
}

/** The address in the form the reader walks, or null when it is not an IP address. */
function canonicalAddress(address: string): string | null {
  // Four-part decimal IPv4 only: ipaddr.js would also take "0x7f.1" or "2130706433".
  if (!ipaddr.IPv4.isValidFourPartDecimal(address) && !ipaddr.IPv6.isValid(address)) return null;
  // An IPv4 address seen on an IPv6 socket (::ffff:192.0.2.1) is looked up as IPv4.
  const parsed = ipaddr.process(address);
  return parsed.kind() === "ipv4"
    ? parsed.toString()
    // Rebuilt from its parts: a zone (fe80::1%eth0) is no part of the lookup.
    : new ipaddr.IPv6((parsed as ipaddr.IPv6).parts).toString();
}

function cannotRead(path: string, err: unknown): GeoIpError {
  return new GeoIpError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
}

/** Reads and checks the database at `path`. */
function load(path: string): Loaded {
  let bytes: Uint8Array;
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
    bytes = Deno.readFileSync(path);
  } catch (err) {
    throw cannotRead(path, err);
  }
  let reader: Reader<CountryResponse>;
  try {
    reader = new Reader<CountryResponse>(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      // Decoded records by their place in the file: a country database has a few hundred
      // distinct ones, and decoding one (its names in eight languages) costs more than finding
      // it. Per file: an offset means nothing in another.
      {
        cache: new ByteCache<string | number, object>({
          name: "geoip records",
          maxBytes: 2 * 1024 * 1024,
          sizeOf: (value) => 2 * JSON.stringify(value).length + 64,
        }),
      },
    );
  } catch (err) {
    throw new GeoIpError(
      `${path} is not a MaxMind DB file (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  return {
    reader,
    stamp: stampOf(info),
    databaseType: String(reader.metadata.databaseType),
    builtAt: reader.metadata.buildEpoch,
  };
}

/**
 * One GeoIP database file, held in memory (GeoLite2 Country is about 10 MB, City about 60 MB).
 * `reloadIfChanged` reads it again once the file has been replaced (MaxMind publishes new data
 * twice a week; geoipupdate replaces the file whole).
 */
export class GeoIpDatabase implements CountryLookup {
  readonly path: string;
  #loaded: Loaded;

  /** Reads the database at `path`; throws GeoIpError saying what is wrong. */
  constructor(path: string) {
    this.path = path;
    this.#loaded = load(path);
  }

  /** The database's own description: its type (GeoLite2-Country, …) and when it was built. */
  get metadata(): { databaseType: string; builtAt: Date } {
    return { databaseType: this.#loaded.databaseType, builtAt: this.#loaded.builtAt };
  }

  country(address: string): string | null {
    const canonical = canonicalAddress(address);
    if (canonical === null) return null;
    try {
      return isoCountry(this.#loaded.reader.get(canonical)?.country?.iso_code) ?? null;
    } catch {
      // A damaged record: this visitor's country is unknown, the view still counts.
      return null;
    }
  }

  /**
   * Reads the file again when its modification time or size changed; true when it did. Throws
   * GeoIpError when the new file cannot be used, and keeps answering from the one it had.
   */
  reloadIfChanged(): boolean {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(this.path);
    } catch (err) {
      throw cannotRead(this.path, err);
    }
    if (stampOf(info) === this.#loaded.stamp) return false;
    this.#loaded = load(this.path);
    return true;
  }
}

/**
 * Checks the file every `intervalMs` and reads it again once it was replaced, logging what it
 * did; a file that cannot be used is logged and the previous one kept. The timer does not keep
 * the process alive.
 */
export function watchGeoIp(
  db: GeoIpDatabase,
  logger: Logger,
  intervalMs = 60_000,
): { stop(): void } {
  const timer = setInterval(() => {
    try {
      if (db.reloadIfChanged()) {
        logger.info("geoip database reloaded", {
          type: db.metadata.databaseType,
          built: db.metadata.builtAt.toISOString(),
        });
      }
    } catch (err) {
      logger.error("geoip database not reloaded, the previous one stays in use", {
        message: err instanceof Error ? err.message : String(err),
      });
    }
  }, intervalMs);
  Deno.unrefTimer(timer);
  return { stop: () => clearInterval(timer) };
}
