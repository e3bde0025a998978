// The result of a sync conflict's merge view: the core's merge regions as the view's
// segments, and the result text the person's choices and typing make of them. The
// regions themselves (which lines each side changed, which are taken automatically and
// where both sides changed the same lines) come from the core's own three-way merge
// (`sync.conflicts`, src-tauri/core/src/sync/merge.rs), the same fold that decides
// whether the conflict merges cleanly. Pure.

import type { MergeRegion } from "../../shared/api/generated";

export type Side = "mine" | "theirs";

export type Segment =
  /** Base lines neither side changed. */
  | { kind: "same"; baseStart: number; mineLine: number; text: string }
  /** An edit taken as it is: one side's, or the same edit on both. */
  | { kind: "auto"; side: Side | "both"; baseStart: number; mineLine: number; base: string; text: string }
  /** Both sides changed these base lines differently: the person decides. */
  | { kind: "overlap"; index: number; baseStart: number; baseEnd: number; mineLine: number; base: string; mine: string; theirs: string };

export type OverlapSegment = Extract<Segment, { kind: "overlap" }>;

export interface Merge3 {
  segments: Segment[];
  overlaps: OverlapSegment[];
}

/** The core's regions as segments, the conflicts numbered in order. */
export function segmentsOf(regions: readonly MergeRegion[]): Merge3 {
  const segments: Segment[] = [];
  const overlaps: OverlapSegment[] = [];
  for (const r of regions) {
    switch (r.kind) {
      case "same":
        segments.push({ kind: "same", baseStart: r.baseStart, mineLine: r.mineLine, text: r.base });
        break;
      case "mine":
      case "both":
        segments.push({ kind: "auto", side: r.kind, baseStart: r.baseStart, mineLine: r.mineLine, base: r.base, text: r.mine });
        break;
      case "theirs":
        segments.push({ kind: "auto", side: "theirs", baseStart: r.baseStart, mineLine: r.mineLine, base: r.base, text: r.theirs });
        break;
      case "conflict": {
        const overlap: OverlapSegment = { kind: "overlap", index: overlaps.length, baseStart: r.baseStart, baseEnd: r.baseEnd, mineLine: r.mineLine, base: r.base, mine: r.mine, theirs: r.theirs };
        overlaps.push(overlap);
        segments.push(overlap);
        break;
      }
    }
  }
  return { segments, overlaps };
}

export type Choice = "mine" | "theirs" | "both";

/** What an overlap holds for a choice; "both" is mine, then theirs, each on its own lines. */
export function chosenText(o: Pick<OverlapSegment, "mine" | "theirs">, choice: Choice): string {
  if (choice === "mine") return o.mine;
  if (choice === "theirs") return o.theirs;
  if (!o.mine) return o.theirs;
  if (!o.theirs) return o.mine;
  return o.mine.endsWith("\n") ? o.mine + o.theirs : `${o.mine}\n${o.theirs}`;
}

/** Where each overlap sits in a result text: `[from, to)` in UTF-16 units. */
export interface Range {
  from: number;
  to: number;
}

/** The result of a merge with a choice (or none yet: the person's side) per overlap,
 * and where each overlap's text lies in it. */
export function compose(m: Merge3, choices: readonly (Choice | undefined)[]): { text: string; ranges: Range[] } {
  let text = "";
  const ranges: Range[] = [];
  for (const s of m.segments) {
    if (s.kind === "overlap") {
      const from = text.length;
      text += chosenText(s, choices[s.index] ?? "mine");
      ranges.push({ from, to: text.length });
    } else text += s.text;
  }
  return { text, ranges };
}

/** The one edit that turns `before` into `after`: `[from, oldTo)` became `[from, newTo)`. */
export function textChange(before: string, after: string): { from: number; oldTo: number; newTo: number } | null {
  if (before === after) return null;
  const max = Math.min(before.length, after.length);
  let from = 0;
  while (from < max && before.charCodeAt(from) === after.charCodeAt(from)) from++;
  let suffix = 0;
  while (suffix < max - from && before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)) suffix++;
  return { from, oldTo: before.length - suffix, newTo: after.length - suffix };
}

/** An overlap's range after an edit of the result, and whether the edit touched it. An
 * overlap's range starts at a line start and ends after its last "\n": typing at its
 * start edits its first line; typing at its end is the next line's. */
export function mapRange(r: Range, change: { from: number; oldTo: number; newTo: number }, textLength: number): { range: Range; touched: boolean } {
  const { from, oldTo, newTo } = change;
  const delta = newTo - oldTo;
  if (oldTo < r.from || (oldTo === r.from && from < oldTo)) return { range: { from: r.from + delta, to: r.to + delta }, touched: false };
  const atEnd = from === r.to && r.from < r.to && r.to < textLength;
  if (from > r.to || atEnd) return { range: r, touched: false };
  return { range: { from: Math.min(r.from, from), to: Math.max(r.to + delta, newTo) }, touched: true };
}
