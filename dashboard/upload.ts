// The dashboard's file upload (a links CSV): a multipart form read as it arrives, by
// @fastify/busboy, never buffered whole. Browsers send a form's parts in document order, so the
// fields placed before the file input (the form token) are read and checked before a byte of
// the file is; the file then goes to its consumer as a stream.
import { Busboy, type BusboyFileStream } from "@fastify/busboy";
import { pipeline, Readable } from "node:stream";
import { ApiError } from "../services/errors.ts";

export type Upload =
  | {
    ok: true;
    /** The file's bytes, as they arrive. Cancelling it discards the rest of the file. */
    file: ReadableStream<Uint8Array>;
    /**
     * Resolves once the rest of the request body has been read and discarded (up to
     * `maxBytes`), so the answer is not sent to a browser still sending its upload, which it
     * may then report as a failed connection rather than show the answer.
     */
    finish(): Promise<void>;
  }
  | { ok: false; reason: "not_a_form" | "refused" | "no_file" };

/**
 * Opens the upload of the multipart form in `request`: `accept` is given the fields that came
 * before the file named `fileField` and says whether to read it. A form without that file, or
 * whose fields `accept` refuses, answers `ok: false` (its body is then left unread).
 */
export async function openUpload(
  request: Request,
  options: {
    fileField: string;
    accept: (fields: Record<string, string>) => boolean;
    /** The file may be this large; a larger one is cut just past it, which the consumer sees. */
    maxFileBytes: number;
  },
): Promise<Upload> {
  const type = request.headers.get("Content-Type") ?? "";
  if (!/^multipart\/form-data\b/i.test(type) || !request.body) {
    return { ok: false, reason: "not_a_form" };
  }
  let bb;
  try {
    bb = Busboy({
      headers: { "content-type": type },
      limits: {
        files: 1,
        fields: 10,
        fieldSize: 4096,
        parts: 12,
        fileSize: options.maxFileBytes + 1,
      },
    });
  } catch {
    return { ok: false, reason: "not_a_form" }; // no boundary in the Content-Type
  }
  // Draining stops past this: a body far larger than any accepted file is not read to its end.
  const maxBodyBytes = options.maxFileBytes + 1024 * 1024;
  let bodyBytes = 0;
  const body = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bodyBytes += chunk.byteLength;
        if (bodyBytes > maxBodyBytes) controller.error(new Error("upload too large to drain"));
        else controller.enqueue(chunk);
      },
    }),
  );
  // The file being read, to be told when the body ends before it does.
  let file: FileBody | undefined;
  const finished = new Promise<void>((resolve) => {
    bb.on("finish", () => resolve());
    pipeline(Readable.fromWeb(body as never), bb, (err) => {
      if (err) file?.fail();
      resolve();
    });
  });
  const fields: Record<string, string> = {};
  return await new Promise<Upload>((resolve) => {
    bb.on("field", (name, value) => {
      fields[name] = value;
    });
    bb.on("file", (name, stream) => {
      if (name !== options.fileField || !options.accept(fields)) {
        stream.resume();
        resolve({ ok: false, reason: "refused" });
        return;
      }
      const opened = fileBody(stream);
      file = opened;
      resolve({
        ok: true,
        file: opened.body,
        finish: () => {
          opened.discard();
          return finished;
        },
      });
    });
    finished.then(() =>
      resolve({ ok: false, reason: options.accept(fields) ? "no_file" : "refused" })
    );
  });
}

/** The upload stopped before its file ended: the connection dropped, or the form was cut. */
export class UploadCut extends ApiError {
  constructor() {
    super("invalid_field", "file: the upload ended before the whole file arrived", {
      field: "file",
    });
  }
}

interface FileBody {
  body: ReadableStream<Uint8Array>;
  /** Reads the rest of the file away (the consumer is done with it). */
  discard(): void;
  /** Ends the body with UploadCut. */
  fail(): void;
}

/**
 * A busboy file stream as a web stream, paused while the consumer is behind. Cancelling it
 * does not destroy the file stream (busboy would then never read the rest of the body): it
 * discards the rest instead.
 */
function fileBody(stream: BusboyFileStream): FileBody {
  let open = true;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const discard = () => {
    open = false;
    stream.resume();
  };
  const fail = () => {
    if (open) controller.error(new UploadCut());
    discard();
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      stream.pause();
      stream.on("data", (chunk: Uint8Array) => {
        if (!open) return;
        c.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((c.desiredSize ?? 0) <= 0) stream.pause();
      });
      stream.on("end", () => {
        if (open) c.close();
        open = false;
      });
      stream.on("error", fail);
    },
    pull() {
      stream.resume();
    },
    cancel: discard,
  }, { highWaterMark: 4 });
  return { body, discard, fail };
}
