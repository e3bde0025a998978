// @vitest-environment node
// The client module is the only place the UI reaches the backend.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(__dirname);
const ALLOWED = new Set(["api/client.ts"]);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return /\.(ts|tsx)$/.test(name) && !/\.test\.(ts|tsx)$/.test(name) ? [p] : [];
  });
}

describe("backend boundary", () => {
  it("only api/client.ts uses fetch, EventSource, XMLHttpRequest or @tauri-apps/api", () => {
    const offenders = files(SRC)
      .map((p) => relative(SRC, p).split("\\").join("/"))
      .filter((rel) => !ALLOWED.has(rel))
      .filter((rel) => /\bfetch\s*\(|EventSource|XMLHttpRequest|@tauri-apps\/api/.test(readFileSync(join(SRC, rel), "utf8")));
    expect(offenders).toEqual([]);
  });
});
