// Marks along the way to the first screen (the project list painted), sent once to the
// desktop shell, which logs how long the start took (and, for `cargo xtask
// bench-start`, writes them to its mark file). Times are milliseconds since the Unix
// epoch, so the shell and the bench can line them up with their own.

import { reportStartup } from "../api/client";

const marks: Record<string, number> = {};
let reported = false;
let painted = false;
const waiting = new Set<() => void>();

function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Records `name` now, once (the first time counts). */
export function markStartup(name: string): void {
  if (!(name in marks)) marks[name] = epochMs();
}

/** After the frame that shows the first screen is painted: record it and tell the shell
 * (once; nothing outside the desktop app). */
export function firstScreenShown(send: (marks: Record<string, number>) => Promise<unknown> = reportStartup): void {
  if (reported) return;
  reported = true;
  requestAnimationFrame(() =>
    setTimeout(() => {
      markStartup("page.painted");
      const nav = performance.getEntriesByType?.("navigation")[0] as PerformanceNavigationTiming | undefined;
      if (nav) {
        marks["page.html"] = performance.timeOrigin + nav.responseEnd;
        if (nav.domInteractive) marks["page.parsed"] = performance.timeOrigin + nav.domInteractive;
      }
      const scripts = (performance.getEntriesByType?.("resource") ?? []).filter((e): e is PerformanceResourceTiming => e.name.endsWith(".js") && "responseEnd" in e);
      if (scripts.length) marks["page.js_fetched"] = performance.timeOrigin + Math.max(...scripts.map((e) => e.responseEnd));
      marks["page.navigation"] = performance.timeOrigin;
      void send({ ...marks }).catch(() => undefined);
      painted = true;
      for (const run of [...waiting]) run();
      waiting.clear();
    }, 0),
  );
}

/** Runs `run` once the first screen is painted (see `firstScreenShown`); at once (in a
 * task of its own) when it already is. Work the first screen does not need waits for it,
 * so it neither delays that frame nor competes with it for the CPU. Returns a cancel. */
export function afterFirstScreen(run: () => void): () => void {
  if (painted) {
    const timer = setTimeout(run, 0);
    return () => clearTimeout(timer);
  }
  waiting.add(run);
  return () => {
    waiting.delete(run);
  };
}
