// What the person has done in a conflict's merge view so far (the result text, where
// each overlap lies in it, the choices and what was typed over), and how a choice, a
// title choice or typing changes it. Pure: the view only holds it and draws it.
import type { SyncConflictView } from "../../shared/api/generated";
import { type Choice, chosenText, compose, mapRange, type Merge3, type OverlapSegment, type Range, type Side, textChange } from "./result";

export interface Draft {
  text: string;
  /** Where each overlap's text lies in `text`. */
  ranges: Range[];
  choices: (Choice | undefined)[];
  /** Overlaps the person typed into in the result. */
  edited: boolean[];
  title: string;
  titleChoice?: Side;
  titleEdited: boolean;
  showBase: boolean;
}

/** A conflict's draft is kept per merge: a re-merged conflict (a new update time) is another. */
export const draftKey = (c: SyncConflictView) => `${c.id}@${c.updatedAt}`;

/** The draft a conflict opens with: the core's clean merge when there is nothing to decide,
 * else the merge with every overlap undecided. */
export function initialDraft(c: SyncConflictView, m: Merge3, mergedTitle: string | null): Draft {
  const { text, ranges } = c.merged && m.overlaps.length === 0 ? { text: c.merged.source, ranges: [] } : compose(m, []);
  return {
    text,
    ranges,
    choices: m.overlaps.map(() => undefined),
    edited: m.overlaps.map(() => false),
    title: c.merged?.title ?? mergedTitle ?? c.mine.title,
    titleEdited: false,
    showBase: false,
  };
}

/** `d` with overlap `o` holding `choice`'s text (the ranges after it moved along). */
export function choose(d: Draft, o: OverlapSegment, choice: Choice): Draft {
  const r = d.ranges[o.index];
  const next = chosenText(o, choice);
  const delta = next.length - (r.to - r.from);
  const ranges = d.ranges.map((x, j) => (j === o.index ? { from: r.from, to: r.from + next.length } : x.from >= r.to ? { from: x.from + delta, to: x.to + delta } : x));
  return {
    ...d,
    text: d.text.slice(0, r.from) + next + d.text.slice(r.to),
    ranges,
    choices: d.choices.map((c, j) => (j === o.index ? choice : c)),
    edited: d.edited.map((e, j) => (j === o.index ? false : e)),
  };
}

/** `d` after the person typed the result into `value`: overlaps typed into count as decided. */
export function typed(d: Draft, value: string): Draft {
  const change = textChange(d.text, value);
  if (!change) return d;
  const mapped = d.ranges.map((r) => mapRange(r, change, d.text.length));
  return { ...d, text: value, ranges: mapped.map((m) => m.range), edited: d.edited.map((e, j) => e || mapped[j].touched) };
}

/** Whether overlap `i` was typed over together with another one: a choice would replace both. */
export function entangled(d: Draft, i: number): boolean {
  const r = d.ranges[i];
  return d.ranges.some((x, j) => j !== i && x.from < r.to && r.from < x.to);
}

/** How many places are still undecided (the title, when it conflicts, and each overlap). */
export function undecidedCount(d: Draft, m: Merge3, titleConflict: boolean): number {
  const titleDecided = !titleConflict || d.titleChoice !== undefined || d.titleEdited;
  return (titleDecided ? 0 : 1) + m.overlaps.filter((o) => d.choices[o.index] === undefined && !d.edited[o.index]).length;
}

/** A short excerpt that names a place: its first non-empty line. */
export function excerpt(...texts: string[]): string {
  for (const t of texts) {
    const line = t.split("\n").find((l) => l.trim());
    if (line) return line.trim().length > 24 ? `${line.trim().slice(0, 24)}…` : line.trim();
  }
  return "";
}
