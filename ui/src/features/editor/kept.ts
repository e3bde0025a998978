// Text the editor could not store when it went away: the window closed, the tab was
// closed or the project was switched while a save was pending, failed, or waited in a
// conflict with a newer working copy. It is written to this browser profile's storage
// at once (a synchronous write the closing page still completes), before the last save
// is tried, and removed when that save stores it. The next opening of the project
// finds it: the same text as stored is dropped, text on the base it came from is simply
// the person's unsaved edit again, and text on a base that moved on is the person's side
// of a conflict with the newer text, for them to resolve. Nothing is overwritten.

import type { Draft } from "./saver";

export interface Kept {
  /** The person's text when the editor went away. */
  mine: Draft;
  /** The stored text it was written on (the base of a conflict, if it meets a newer one). */
  base: Draft;
  /** ISO time it was kept. */
  keptAt: string;
}

const key = (projectId: string) => `inkstone.kept.${projectId}`;

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

function isDraft(x: unknown): x is Draft {
  const d = x as Draft | null;
  return !!d && typeof d.title === "string" && typeof d.source === "string";
}

/** Keeps the person's unsaved text of a project (replacing what was kept before). */
export function keepUnsaved(projectId: string, kept: Kept): void {
  try {
    storage()?.setItem(key(projectId), JSON.stringify(kept));
  } catch {
    // Storage full or refused: the save still runs; nothing more can be done here.
  }
}

/** What was kept of a project, if anything readable. */
export function readKept(projectId: string): Kept | null {
  try {
    const raw = storage()?.getItem(key(projectId));
    if (!raw) return null;
    const k = JSON.parse(raw) as Partial<Kept>;
    return isDraft(k.mine) && isDraft(k.base) ? { mine: k.mine, base: k.base, keptAt: String(k.keptAt ?? "") } : null;
  } catch {
    return null;
  }
}

export function dropKept(projectId: string): void {
  try {
    storage()?.removeItem(key(projectId));
  } catch {
    // Nothing to do.
  }
}

export type KeptOutcome = { kind: "none" } | { kind: "edit"; mine: Draft } | { kind: "conflict"; mine: Draft; base: Draft };

/** What a kept text means against the working copy as stored now. */
export function judgeKept(kept: Kept | null, stored: Draft): KeptOutcome {
  if (!kept) return { kind: "none" };
  const same = (a: Draft, b: Draft) => a.title === b.title && a.source === b.source;
  if (same(kept.mine, stored)) return { kind: "none" };
  if (same(kept.base, stored)) return { kind: "edit", mine: kept.mine };
  return { kind: "conflict", mine: kept.mine, base: kept.base };
}
