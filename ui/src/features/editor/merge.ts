// Keeping both sides in the editor: when a teammate's version (or a resolution) arrives
// while the person has unsaved text, their text and the newer one are merged three-way
// from the text both started from, by the core's line-merge rule (./lineMerge.ts). Edits that do not touch merge cleanly; where both
// sides changed the same lines, both texts stay (the person's first) for the person to
// tidy up, so nothing is dropped.

import { compose } from "../sync";
import { merge3 as mergeLines } from "./lineMerge";

export interface Doc {
  title: string;
  source: string;
}

export interface MergeResult extends Doc {
  /** Places where both sides changed the same lines (and the title, when both renamed it). */
  overlaps: number;
  /** UTF-16 ranges in `source` holding both sides of an overlap, for the editor to show. */
  spans: { from: number; to: number }[];
}

/** Merges `mine` and `theirs`, both edited from `base`. Never drops a side's text. */
export function merge3(base: Doc, mine: Doc, theirs: Doc): MergeResult {
  let overlaps = 0;
  let title: string;
  if (mine.title === theirs.title || theirs.title === base.title) title = mine.title;
  else if (mine.title === base.title) title = theirs.title;
  else {
    // Both renamed it: the person's title stays on screen; theirs is in History.
    title = mine.title;
    overlaps++;
  }
  if (mine.source === theirs.source || theirs.source === base.source) return { title, source: mine.source, overlaps, spans: [] };
  if (mine.source === base.source) return { title, source: theirs.source, overlaps, spans: [] };
  const m = mergeLines(base.source, mine.source, theirs.source);
  const { text, ranges } = compose(
    m,
    m.overlaps.map(() => "both"),
  );
  return { title, source: text, overlaps: overlaps + m.overlaps.length, spans: ranges };
}
