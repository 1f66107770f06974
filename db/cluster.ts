// Whether this process's database is a Citus cluster (docs/SCALING.md, "Running on Citus"): set
// by migrate() from the database it migrated, read by the few places whose SQL differs there.
// One process serves one database, so one flag.
let citus = false;

/** True when the database is a Citus coordinator (its `citus` extension is present). */
export function onCitus(): boolean {
  return citus;
}

export function setOnCitus(value: boolean): void {
  citus = value;
}
