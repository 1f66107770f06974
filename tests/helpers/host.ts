// Requests with a chosen Host header. fetch always sends the URL's own host, so these go
// through node:http, still to the real server on its loopback port.
import http from "node:http";

export interface HostResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** GET (or HEAD) `path` on the server at `base`, as if addressed to `host`. */
export function callOnHost(
  base: string,
  host: string,
  path: string,
  options: { headers?: Record<string, string>; method?: string } = {},
): Promise<HostResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: Number(url.port),
      path,
      method: options.method ?? "GET",
      headers: { ...options.headers, Host: host },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
        }
        resolve({ status: res.statusCode ?? 0, headers, text });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}
