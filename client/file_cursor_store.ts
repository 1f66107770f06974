// The default cursor store: one JSON file, replaced atomically on every save.
import { open, readFile, rename, unlink } from "node:fs/promises";
import type { CursorState, CursorStore } from "./cursor_store.ts";

const FILE_FORMAT = 1;

interface StoredCursor {
  after: string | null;
  recent_ids: string[];
  saved_at: string;
}

interface CursorFile {
  format: number;
  cursors: Record<string, StoredCursor>;
}

/**
 * Keeps cursors in one JSON file (several keys may share it). Every save writes a temporary
 * file next to it, flushes it to disk and renames it over the old one, so that a crash leaves
 * either the previous file or the new one. Saves through one instance are serialised; two
 * processes must not share a file.
 */
export class FileCursorStore implements CursorStore {
  readonly path: string;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  async load(key: string): Promise<CursorState | null> {
    const stored = (await this.#read()).cursors[key];
    if (!stored) return null;
    return { after: stored.after, recentIds: [...stored.recent_ids] };
  }

  save(key: string, state: CursorState): Promise<void> {
    return this.#update((file) => {
      file.cursors[key] = {
        after: state.after,
        recent_ids: [...state.recentIds],
        saved_at: new Date().toISOString(),
      };
    });
  }

  delete(key: string): Promise<void> {
    return this.#update((file) => {
      delete file.cursors[key];
    });
  }

  #update(change: (file: CursorFile) => void): Promise<void> {
    const next = this.#queue.then(async () => {
      const file = await this.#read();
      change(file);
      await this.#write(file);
    });
    this.#queue = next.catch(() => {});
    return next;
  }

  async #read(): Promise<CursorFile> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (err) {
      if ((err as { code?: string }).code === "ENOENT") return { format: FILE_FORMAT, cursors: {} };
      throw err;
    }
    const parsed = JSON.parse(text) as Partial<CursorFile>;
    if (parsed.format !== FILE_FORMAT || typeof parsed.cursors !== "object" || !parsed.cursors) {
      throw new Error(`${this.path} is not a cursor file of format ${FILE_FORMAT}`);
    }
    return parsed as CursorFile;
  }

  async #write(file: CursorFile): Promise<void> {
    const temp = `${this.path}.${Math.random().toString(36).slice(2)}.tmp`;
    const handle = await open(temp, "w", 0o600);
    try {
      await handle.writeFile(JSON.stringify(file, null, 1) + "\n");
      await handle.sync();
    } catch (err) {
      await handle.close();
      await unlink(temp).catch(() => {});
      throw err;
    }
    await handle.close();
    await rename(temp, this.path);
  }
}
