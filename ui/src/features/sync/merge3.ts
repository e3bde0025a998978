// The three-way merge of a sync conflict, as the merge view shows it: the base, the
// person's side ("mine") and the server's side ("theirs"), cut into segments in document
// order. An edit only one side made is taken automatically; edits both sides made to the
// same or adjacent lines of the base are an overlap the person decides (the core's rule,
// src-tauri/core/src/sync/merge.rs: edits that touch are never guessed apart), unless both
// sides wrote the same text there. The core reports overlaps but not the regions around
// them, so the view computes the whole structure here from the three texts. Pure.

import { diff } from "@codemirror/merge";

/** The lines of `text`, each with its "\n" (the last one may lack it): joined, they are the text. */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  let at = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", at)) {
    out.push(text.slice(at, i + 1));
    at = i + 1;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** Lines `start..end` of the base replaced by `lines`. */
export interface LineEdit {
  start: number;
  end: number;
  lines: string[];
}

/** One UTF-16 unit per distinct line, never a surrogate: a line diff as a character diff. */
const CODES = 0xd800 + (0x10000 - 0xe000);

/** `base` → `other` as line edits, in order, separated by at least one equal line. */
export function lineEdits(base: string[], other: string[]): LineEdit[] {
  const codes = new Map<string, string>();
  const encode = (lines: string[]): string | null => {
    let out = "";
    for (const line of lines) {
      let code = codes.get(line);
      if (code === undefined) {
        const n = codes.size;
        if (n >= CODES) return null;
        code = String.fromCharCode(n < 0xd800 ? n : n + 0x800);
        codes.set(line, code);
      }
      out += code;
    }
    return out;
  };
  const a = encode(base);
  const b = encode(other);
  if (a === null || b === null) {
    // More distinct lines than codes: one edit over everything rather than a wrong diff.
    return base.join("") === other.join("") ? [] : [{ start: 0, end: base.length, lines: other }];
  }
  return diff(a, b).map((c) => ({ start: c.fromA, end: c.toA, lines: other.slice(c.fromB, c.toB) }));
}

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

interface Tagged extends LineEdit {
  side: Side;
}

/** The lines of `base[start..end]` with the given edits (all inside the range) applied. */
function applyEdits(base: string[], start: number, end: number, edits: Tagged[]): string {
  let out = "";
  let at = start;
  for (const e of edits) {
    out += base.slice(at, e.start).join("") + e.lines.join("");
    at = e.end;
  }
  return out + base.slice(at, end).join("");
}

function lineCount(text: string): number {
  return splitLines(text).length;
}

/** The merge of `base → mine` and `base → theirs`. */
export function merge3(base: string, mine: string, theirs: string): Merge3 {
  const baseLines = splitLines(base);
  const edits: Tagged[] = [
    ...lineEdits(baseLines, splitLines(mine)).map((e) => ({ ...e, side: "mine" as const })),
    ...lineEdits(baseLines, splitLines(theirs)).map((e) => ({ ...e, side: "theirs" as const })),
  ].sort((x, y) => x.start - y.start || x.end - y.end);
  // Groups of edits that touch (adjacent lines included), in base order.
  const groups: { start: number; end: number; edits: Tagged[] }[] = [];
  for (const e of edits) {
    const last = groups[groups.length - 1];
    if (last && e.start <= last.end) {
      last.edits.push(e);
      last.end = Math.max(last.end, e.end);
    } else groups.push({ start: e.start, end: e.end, edits: [e] });
  }
  const segments: Segment[] = [];
  const overlaps: OverlapSegment[] = [];
  let at = 0;
  let mineLine = 0;
  const same = (to: number) => {
    if (to <= at) return;
    const text = baseLines.slice(at, to).join("");
    segments.push({ kind: "same", baseStart: at, mineLine, text });
    mineLine += to - at;
  };
  for (const g of groups) {
    same(g.start);
    const baseText = baseLines.slice(g.start, g.end).join("");
    const mineEdits = g.edits.filter((e) => e.side === "mine");
    const theirEdits = g.edits.filter((e) => e.side === "theirs");
    const mineText = applyEdits(baseLines, g.start, g.end, mineEdits);
    const theirText = applyEdits(baseLines, g.start, g.end, theirEdits);
    if (mineEdits.length === 0 || theirEdits.length === 0 || mineText === theirText) {
      const side: Side | "both" = theirEdits.length === 0 ? "mine" : mineEdits.length === 0 ? "theirs" : "both";
      segments.push({ kind: "auto", side, baseStart: g.start, mineLine, base: baseText, text: side === "theirs" ? theirText : mineText });
    } else {
      const overlap: OverlapSegment = { kind: "overlap", index: overlaps.length, baseStart: g.start, baseEnd: g.end, mineLine, base: baseText, mine: mineText, theirs: theirText };
      overlaps.push(overlap);
      segments.push(overlap);
    }
    mineLine += lineCount(mineText);
    at = g.end;
  }
  same(baseLines.length);
  return { segments, overlaps };
}

/** The whole texts as one overlap: what the view shows when the core reports overlaps
 * its own merge found but this one does not (never guessed apart). */
export function wholeOverlap(base: string, mine: string, theirs: string): Merge3 {
  const overlap: OverlapSegment = { kind: "overlap", index: 0, baseStart: 0, baseEnd: splitLines(base).length, mineLine: 0, base, mine, theirs };
  return { segments: [overlap], overlaps: [overlap] };
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
