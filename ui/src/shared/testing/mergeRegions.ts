// Sync conflicts as `sync.conflicts` sends them, for tests: the merge regions and title
// merge of each come from ./merge-regions.json, which the core's own test
// (src-tauri/api/tests/it/merge_regions.rs) holds to the core's three-way merge. A
// conflict whose sides are not in that file is an error: add the case there and let the
// core fill in its merge (INKSTONE_UPDATE_FIXTURES=1), never write one by hand.

import type { ConflictSide, MergeRegion, SyncConflict, SyncConflictView } from "../api/generated";
import fixture from "./merge-regions.json";

interface Doc {
  title: string;
  source: string;
}

interface Case {
  name: string;
  base: Doc;
  mine: Doc;
  theirs: Doc;
  regions?: MergeRegion[];
  mergedTitle?: string;
}

const cases = (fixture as unknown as { cases: Case[] }).cases;

const MISSING = "These sides are not in merge-regions.json: add them and run the core's merge_regions test with INKSTONE_UPDATE_FIXTURES=1.";

const same = (doc: Doc, side: ConflictSide) => doc.title === side.title && doc.source === side.source;

/** The core's merge regions of three texts (any titles). */
export function regionsOf(base: string, mine: string, theirs: string): MergeRegion[] {
  const found = cases.find((c) => c.base.source === base && c.mine.source === mine && c.theirs.source === theirs);
  if (!found?.regions) throw new Error(MISSING);
  return found.regions;
}

/** `conflict` with the merge the core sends for its three sides. */
export function asSent(conflict: SyncConflict): SyncConflictView {
  const found = cases.find((c) => same(c.base, conflict.base) && same(c.mine, conflict.mine) && same(c.theirs, conflict.theirs));
  if (!found?.regions) throw new Error(MISSING);
  return { ...conflict, regions: found.regions, ...(found.mergedTitle !== undefined ? { mergedTitle: found.mergedTitle } : {}) };
}
