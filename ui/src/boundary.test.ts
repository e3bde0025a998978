// @vitest-environment node
// The UI's shape, checked. Three kinds of folder:
// - shared/: the transport (shared/api), messages (shared/i18n), the design system
//   (shared/ui) and small helpers (shared/lib). It imports nothing from app/ or features/.
// - features/<name>/: one feature each. Another feature, or the app, imports it only
//   through its face, features/<name>/index.ts; a path below the face is private.
// - app/: the shell (window, routing, providers). Nothing imports it.
// And the backend: only the transports behind shared/api/client.ts touch the wire.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(__dirname);
const ALLOWED = new Set(["shared/api/tauri.ts", "shared/api/http.ts"]);
const TRANSPORT_PIECES = /from\s+["'](?:[^"']*\/)?(?:tauri|http|sse|transport|errors)["']/;

function files(dir: string, withTests = false): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p, withTests);
    return /\.(ts|tsx)$/.test(name) && (withTests || !/\.test\.(ts|tsx)$/.test(name)) ? [p] : [];
  });
}
const relPath = (p: string) => relative(SRC, p).split("\\").join("/");

/** Every relative module specifier in `text`: static imports and re-exports, `import("…")` and bare `import "…"`. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)["'](\.[^"']*)["']/gm)) out.push(m[1]!);
  return out;
}

type Part = { kind: "app" } | { kind: "shared" } | { kind: "feature"; name: string; rest: string } | { kind: "root" };
function partOf(path: string): Part {
  const [top, name, ...rest] = path.split("/");
  if (top === "app") return { kind: "app" };
  if (top === "shared") return { kind: "shared" };
  if (top === "features" && name !== undefined) return { kind: "feature", name, rest: rest.join("/") };
  return { kind: "root" };
}
const isFace = (rest: string) => rest === "" || /^index(\.tsx?)?$/.test(rest);

/** The imports in `sources` (paths relative to ui/src) that break the layout's rules, as "file → specifier: why". */
export function layoutOffenders(sources: { path: string; text: string }[]): string[] {
  const offenders: string[] = [];
  for (const { path, text } of sources) {
    const from = partOf(path);
    for (const spec of specifiers(text)) {
      const target = posix.normalize(posix.join(posix.dirname(path), spec));
      const to = partOf(target);
      const why =
        from.kind === "shared" && (to.kind === "feature" || to.kind === "app")
          ? "shared code imports no feature and not the app"
          : to.kind === "app" && from.kind !== "app"
            ? "nothing imports the app"
            : to.kind === "feature" && !(from.kind === "feature" && from.name === to.name) && !isFace(to.rest)
              ? `another feature is reached only through its face, features/${to.name}/index.ts`
              : null;
      if (why) offenders.push(`${path} → ${spec}: ${why}`);
    }
  }
  return offenders;
}

describe("layout", () => {
  it("features reach each other and the app reaches features only through faces; shared code imports neither", () => {
    const sources = files(SRC, true).map((p) => ({ path: relPath(p), text: readFileSync(p, "utf8") }));
    expect(layoutOffenders(sources)).toEqual([]);
  });

  it("every feature has a face", () => {
    const missing = readdirSync(join(SRC, "features")).filter((f) => !statSync(join(SRC, "features", f, "index.ts"), { throwIfNoEntry: false }));
    expect(missing).toEqual([]);
  });

  it("the checker catches a feature reaching past another's face, a lazy import past it, and shared code importing a feature", () => {
    const bad = [
      { path: "features/drafting/Thing.tsx", text: 'import { DraftPreview } from "../drafts/DraftsPanel";\n' },
      { path: "features/editor/View.tsx", text: 'const X = lazy(() => import("../review/ProposalReview"));\n' },
      { path: "shared/ui/Widget.tsx", text: 'import { useSync } from "../../features/sync";\n' },
      { path: "features/sync/Status.ts", text: 'import { App } from "../../app/App";\n' },
      { path: "app/App.tsx", text: 'export { Settings } from "../features/settings/Settings";\n' },
    ];
    expect(layoutOffenders(bad)).toEqual([
      "features/drafting/Thing.tsx → ../drafts/DraftsPanel: another feature is reached only through its face, features/drafts/index.ts",
      "features/editor/View.tsx → ../review/ProposalReview: another feature is reached only through its face, features/review/index.ts",
      "shared/ui/Widget.tsx → ../../features/sync: shared code imports no feature and not the app",
      "features/sync/Status.ts → ../../app/App: nothing imports the app",
      "app/App.tsx → ../features/settings/Settings: another feature is reached only through its face, features/settings/index.ts",
    ]);
    const good = [
      { path: "features/drafting/Thing.tsx", text: 'import { DraftPreview } from "../drafts";\nimport { x } from "./store";\nimport { y } from "../../shared/ui/Dialog";\n' },
      { path: "app/App.tsx", text: 'import { Settings } from "../features/settings";\nimport { z } from "../features/sync/index";\n' },
    ];
    expect(layoutOffenders(good)).toEqual([]);
  });
});

/** Components (.tsx) reach the engine through the data layer (shared/api/query.ts:
 * useMethod, useWrite, useCalls, fetchRead, readFresh) or a named function of a plain
 * TypeScript model or data module, never by calling the client themselves. Each file
 * still allowed, with why. */
// None today: the shell's start-up reads (the project list timed for the launch budget,
// the brands and templates, the sample project) are in its hooks (app/useProjectList.ts,
// app/useLibrary.ts).
const DIRECT_CALLS_ALLOWED: Record<string, string> = {};
const DIRECT_CALL = /\bclient\s*\.\s*call\s*\(|\.\s*call\s*\(\s*["'`][A-Za-z]+\.[A-Za-z]+["'`]/;

/** The components in `sources` that call the client directly (paths relative to ui/src). */
export function directCallers(sources: { path: string; text: string }[]): string[] {
  return sources.filter(({ path, text }) => path.endsWith(".tsx") && !(path in DIRECT_CALLS_ALLOWED) && DIRECT_CALL.test(text)).map(({ path }) => path);
}

describe("data layer", () => {
  it("no component calls client.call( itself: reads and writes go through the data layer", () => {
    const sources = files(SRC).map((p) => ({ path: relPath(p), text: readFileSync(p, "utf8") }));
    expect(directCallers(sources)).toEqual([]);
  });

  it("every file allowed to call directly still does (an entry that is no longer needed goes)", () => {
    for (const path of Object.keys(DIRECT_CALLS_ALLOWED)) expect(DIRECT_CALL.test(readFileSync(join(SRC, path), "utf8"))).toBe(true);
  });

  it("the checker catches a direct call, one split over lines and one through another name, and leaves models and hooks alone", () => {
    const bad = [
      { path: "features/review/Thing.tsx", text: 'const v = await client.call("proposal.get", { proposalId });\n' },
      { path: "features/sync/Other.tsx", text: 'client\n      .call("sync.status", {})\n      .then(show);\n' },
      { path: "features/drafts/Third.tsx", text: 'const { client: api } = useApp();\nawait api.call("platformDraft.save", p);\n' },
    ];
    expect(directCallers(bad)).toEqual(["features/review/Thing.tsx", "features/sync/Other.tsx", "features/drafts/Third.tsx"]);
    const good = [
      { path: "features/review/data.ts", text: 'return client.call("proposal.get", { proposalId });\n' },
      { path: "features/review/View.tsx", text: 'const why = useMethod("proposal.why", { proposalId });\nconst { call } = useCalls();\nawait call("proposal.accept", p);\nfn.call(this, x);\n' },
    ];
    expect(directCallers(good)).toEqual([]);
  });
});

describe("backend boundary", () => {
  it("only the transports behind shared/api/client.ts use fetch, EventSource, XMLHttpRequest or @tauri-apps/api", () => {
    const offenders = files(SRC)
      .map(relPath)
      .filter((rel) => !ALLOWED.has(rel))
      .filter((rel) => /\bfetch\s*\(|EventSource|XMLHttpRequest|@tauri-apps\/api/.test(readFileSync(join(SRC, rel), "utf8")));
    expect(offenders).toEqual([]);
  });

  it("outside shared/api/ the UI reaches the transports only through shared/api/client.ts", () => {
    const offenders = files(SRC)
      .map(relPath)
      .filter((rel) => !rel.startsWith("shared/api/"))
      .filter((rel) => TRANSPORT_PIECES.test(readFileSync(join(SRC, rel), "utf8")));
    expect(offenders).toEqual([]);
  });
});

/** A component file (.tsx under app/ or features/, tests aside) holds one view and fits on
 * a few screens: plain logic goes to a .ts module beside it, sub-views to their own files
 * in the same feature folder. */
export const COMPONENT_MAX_LINES = 300;
/** Each component still allowed to be longer, with why (an entry that is no longer needed goes). */
const LONG_COMPONENTS_ALLOWED: Record<string, string> = {};

const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

/** The component files in `sources` longer than COMPONENT_MAX_LINES and not allowed, as "path: n lines". */
export function longComponents(sources: { path: string; text: string }[]): string[] {
  return sources
    .filter(({ path }) => /^(app|features)\/.*\.tsx$/.test(path) && !/\.test\.tsx$/.test(path) && !(path in LONG_COMPONENTS_ALLOWED))
    .filter(({ text }) => lineCount(text) > COMPONENT_MAX_LINES)
    .map(({ path, text }) => `${path}: ${lineCount(text)} lines`);
}

describe("component size", () => {
  it(`no component file is over ${COMPONENT_MAX_LINES} lines`, () => {
    const sources = files(SRC).map((p) => ({ path: relPath(p), text: readFileSync(p, "utf8") }));
    expect(longComponents(sources)).toEqual([]);
  });

  it("every component allowed to be long still is (an entry that is no longer needed goes)", () => {
    for (const path of Object.keys(LONG_COMPONENTS_ALLOWED)) expect(lineCount(readFileSync(join(SRC, path), "utf8"))).toBeGreaterThan(COMPONENT_MAX_LINES);
  });

  it("the checker counts lines of components only, and skips tests, models and shared code", () => {
    const long = "x\n".repeat(COMPONENT_MAX_LINES + 1);
    const fits = "x\n".repeat(COMPONENT_MAX_LINES);
    const sources = [
      { path: "features/review/Big.tsx", text: long },
      { path: "app/Shell.tsx", text: long },
      { path: "features/review/Fits.tsx", text: fits },
      { path: "features/review/Big.test.tsx", text: long },
      { path: "features/review/model.ts", text: long },
      { path: "shared/ui/Widget.tsx", text: long },
    ];
    expect(longComponents(sources)).toEqual([`features/review/Big.tsx: ${COMPONENT_MAX_LINES + 1} lines`, `app/Shell.tsx: ${COMPONENT_MAX_LINES + 1} lines`]);
  });
});
