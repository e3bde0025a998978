// @vitest-environment node
// The client module is the only place the UI reaches the backend: its transports
// (api/tauri.ts, api/http.ts) are the only files that touch the wire, and the rest of
// the UI imports them through api/client.ts.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(__dirname);
const ALLOWED = new Set(["api/tauri.ts", "api/http.ts"]);
const TRANSPORT_PIECES = /from\s+["'][./]*(?:api\/)?(?:tauri|http|sse|transport|errors)["']/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return /\.(ts|tsx)$/.test(name) && !/\.test\.(ts|tsx)$/.test(name) ? [p] : [];
  });
}

describe("backend boundary", () => {
  it("only the transports behind api/client.ts use fetch, EventSource, XMLHttpRequest or @tauri-apps/api", () => {
    const offenders = files(SRC)
      .map((p) => relative(SRC, p).split("\\").join("/"))
      .filter((rel) => !ALLOWED.has(rel))
      .filter((rel) => /\bfetch\s*\(|EventSource|XMLHttpRequest|@tauri-apps\/api/.test(readFileSync(join(SRC, rel), "utf8")));
    expect(offenders).toEqual([]);
  });

  it("outside api/ the UI reaches the transports only through api/client.ts", () => {
    const offenders = files(SRC)
      .map((p) => relative(SRC, p).split("\\").join("/"))
      .filter((rel) => !rel.startsWith("api/"))
      .filter((rel) => TRANSPORT_PIECES.test(readFileSync(join(SRC, rel), "utf8")));
    expect(offenders).toEqual([]);
  });
});
