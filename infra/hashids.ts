import Sqids from "sqids";

// A fixed shuffle of the default alphabet: hashids stay stable across restarts and instances.
const sqids = new Sqids({
  alphabet: "k3G7QAe51FCsPW92uEOyq4Bg6Sp8YzVTmnU0liwDdHXLajZrfxNhobJIRcMvKt",
  minLength: 10,
});

export function projectHashid(projectId: number): string {
  return sqids.encode([projectId]);
}
