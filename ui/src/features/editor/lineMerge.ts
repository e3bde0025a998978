// The line merge behind "keep both" in the editor: the person's unsaved text (which the
// core has not seen) merged three-way with a newer version, by the core's rule (edits
// that touch are never guessed apart: src-tauri/core/src/sync/merge.rs). It runs as the
// overlay renders, on text still being typed; a sync conflict's merge view does not use
// it: its regions come from the core (`sync.conflicts`). Pure.

import { diff } from "@codemirror/merge";
import type { Merge3, OverlapSegment, Segment, Side } from "../sync";

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
