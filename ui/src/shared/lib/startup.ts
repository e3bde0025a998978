// Marks along the way to the first screen (the project list painted), sent to the
// desktop shell when it is painted, which logs how long the start took (and, for `cargo
// xtask bench-start`, writes them to its mark file). When the entry painted it as a
// static frame, React's takeover is sent again later, with its own marks. Times are milliseconds since the Unix
// epoch, so the shell and the bench can line them up with their own.

import { reportStartup } from "../api/client";

const marks: Record<string, number> = {};
let reported = false;
let reactShown = false;
let painted = false;
const waiting = new Set<() => void>();

function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Records `name` now, once (the first time counts). */
export function markStartup(name: string): void {
  if (!(name in marks)) marks[name] = epochMs();
}

/** Once the frame after this one is painted, runs `then` (in a task of its own). Marks
 * `frameMark` when that frame begins (its animation-frame callbacks run before its style,
 * layout and paint), so the profile tells waiting for a frame from painting it. */
function afterPaint(then: () => void, frameMark?: string) {
  requestAnimationFrame(() => {
    if (frameMark) markStartup(frameMark);
    setTimeout(then, 0);
  });
}

/** Records the page's own timings and tells the shell (the desktop app; nothing
 * elsewhere) that the first screen is painted, the first time; later calls send the
 * marks again, with those set since (the shell logs them as a later line). */
function report(send: (marks: Record<string, number>) => Promise<unknown>) {
  if (!reported) {
    markStartup("page.painted");
    const nav = performance.getEntriesByType?.("navigation")[0] as PerformanceNavigationTiming | undefined;
    if (nav) {
      marks["page.html"] = performance.timeOrigin + nav.responseEnd;
      if (nav.domInteractive) marks["page.parsed"] = performance.timeOrigin + nav.domInteractive;
    }
    const scripts = (performance.getEntriesByType?.("resource") ?? []).filter((e): e is PerformanceResourceTiming => e.name.endsWith(".js") && "responseEnd" in e);
    if (scripts.length) marks["page.js_fetched"] = performance.timeOrigin + Math.max(...scripts.map((e) => e.responseEnd));
    marks["page.navigation"] = performance.timeOrigin;
  }
  reported = true;
  void send({ ...marks }).catch(() => undefined);
}

/** After the entry's static first frame (the project list, ../../app/firstFrame.ts) is
 * painted: that is the first screen (`page.painted`), so the shell hears of it now. What
 * waits for the first screen (`afterFirstScreen`) still waits for React's. Resolves then. */
export function staticFrameShown(send: (marks: Record<string, number>) => Promise<unknown> = reportStartup): Promise<void> {
  return new Promise((resolve) =>
    afterPaint(() => {
      if (!reported) report(send);
      resolve();
    }, "page.static_frame"),
  );
}

/** After React's frame that shows the first screen is painted (`page.react`): record it
 * and tell the shell (once; again, with this mark, when the static frame was first), then
 * run what waited for it. */
export function firstScreenShown(send: (marks: Record<string, number>) => Promise<unknown> = reportStartup): void {
  if (reactShown) return;
  reactShown = true;
  afterPaint(() => {
    markStartup("page.react");
    report(send);
    painted = true;
    for (const run of [...waiting]) run();
    waiting.clear();
  });
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
