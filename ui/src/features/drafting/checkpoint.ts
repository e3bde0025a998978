// Going back to a checkpoint, outside React: its name in the person's language, what a
// restore would change (the text's diff either way round, the versions it takes back)
// and the words for each of those versions.
import type { ApiClient } from "../../shared/api/client";
import type { Checkpoint, DiffLine, Hunk, ProposalView, TextDiffResult, VersionSummary } from "../../shared/api/generated";
import { readFresh } from "../../shared/api/query";
import type { T } from "../../shared/context";
import { has, type MessageId } from "../../shared/i18n";
import type { Item } from "./timeline";

/** A diff read the other way round: from the new side to the old (the checkpoint). */
export function reverseDiff(diff: TextDiffResult): TextDiffResult {
  const flip = (l: DiffLine): DiffLine => ({ ...l, kind: l.kind === "insert" ? "delete" : l.kind === "delete" ? "insert" : l.kind, oldLine: l.newLine, newLine: l.oldLine });
  const hunks = diff.hunks.map((h): Hunk => {
    // Within each run of changed lines the deletions come first, as a diff shows them.
    const lines: DiffLine[] = [];
    let run: DiffLine[] = [];
    const close = () => {
      lines.push(...run.filter((l) => l.kind === "delete"), ...run.filter((l) => l.kind === "insert"));
      run = [];
    };
    for (const l of h.lines.map(flip)) {
      if (l.kind === "equal") {
        close();
        lines.push(l);
      } else run.push(l);
    }
    close();
    return { oldStart: h.newStart, oldLen: h.newLen, newStart: h.oldStart, newLen: h.oldLen, lines };
  });
  return { hunks, nInsertions: diff.nDeletions, nDeletions: diff.nInsertions, identical: diff.identical };
}

/** A line diff of two texts (the checkpoint kept unsaved text, which no version holds). */
export function lineDiff(before: string, after: string, context = 2): TextDiffResult {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length * b.length > 4_000_000) {
    const lines: DiffLine[] = [
      ...a.map((text, i): DiffLine => ({ kind: "delete", oldLine: i + 1, newLine: null, segments: [{ text, emphasized: false }] })),
      ...b.map((text, i): DiffLine => ({ kind: "insert", oldLine: null, newLine: i + 1, segments: [{ text, emphasized: false }] })),
    ];
    return { hunks: [{ oldStart: 1, oldLen: a.length, newStart: 1, newLen: b.length, lines }], nInsertions: b.length, nDeletions: a.length, identical: false };
  }
  // Longest common subsequence, from the end.
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const all: DiffLine[] = [];
  let i = 0;
  let j = 0;
  const seg = (text: string) => [{ text, emphasized: false }];
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      all.push({ kind: "equal", oldLine: i + 1, newLine: j + 1, segments: seg(a[i]) });
      i++;
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
      all.push({ kind: "delete", oldLine: i + 1, newLine: null, segments: seg(a[i]) });
      i++;
    } else {
      all.push({ kind: "insert", oldLine: null, newLine: j + 1, segments: seg(b[j]) });
      j++;
    }
  }
  const hunks: Hunk[] = [];
  let k = 0;
  let prevStop = 0;
  while (k < all.length) {
    if (all[k].kind === "equal") {
      k++;
      continue;
    }
    const start = Math.max(prevStop, k - context);
    let end = k;
    while (end < all.length) {
      if (all[end].kind !== "equal") {
        end++;
        continue;
      }
      let e = end;
      while (e < all.length && all[e].kind === "equal") e++;
      if (e < all.length && e - end <= context * 2) end = e;
      else break;
    }
    const stop = Math.min(all.length, end + context);
    const lines = all.slice(start, stop);
    const firstOld = lines.find((l) => l.oldLine !== null)?.oldLine ?? 1;
    const firstNew = lines.find((l) => l.newLine !== null)?.newLine ?? 1;
    hunks.push({
      oldStart: firstOld,
      oldLen: lines.filter((l) => l.kind !== "insert").length,
      newStart: firstNew,
      newLen: lines.filter((l) => l.kind !== "delete").length,
      lines,
    });
    k = stop;
    prevStop = stop;
  }
  const nInsertions = all.filter((l) => l.kind === "insert").length;
  const nDeletions = all.filter((l) => l.kind === "delete").length;
  return { hunks, nInsertions, nDeletions, identical: nInsertions + nDeletions === 0 };
}

/** The first words of a task, for a checkpoint's name. */
function firstWords(text: string, max = 16): string {
  const one = text.replace(/\s+/g, " ").trim();
  return [...one].length > max ? `${[...one].slice(0, max).join("")}…` : one;
}

/** A checkpoint's name: a person's or the assistant's label; for the harness's own, the
 * turn it was kept around (its number and first words), else the core's wording id
 * (`labelId`, with its values) in the person's language — never its English `label`. */
export function checkpointName(t: T, lang: "en" | "zh", c: Checkpoint, items: readonly Item[]): string {
  if (c.reason === "manual" || c.reason === "assistant") return c.label;
  const worded = c.labelId && has(lang, `ai.checkpoint.label.${c.labelId}`) ? t(`ai.checkpoint.label.${c.labelId}` as MessageId, Object.fromEntries(Object.entries(c.labelParams ?? {}).map(([k, v]) => [k, v ?? ""]))) : null;
  const users = items.filter((i): i is Extract<Item, { kind: "user" }> => i.kind === "user");
  const seqOf = (i: Item) => Number(i.key);
  // Before a turn: kept at its `turn_started`, the message follows at once. After: the
  // last message of the turn came before it.
  let at = c.reason === "before_turn" ? users.findIndex((u) => seqOf(u) === c.sequence + 1) : -1;
  if (at < 0) at = users.reduce((found, u, idx) => (seqOf(u) <= c.sequence ? idx : found), -1);
  // Stored before `labelId` existed: the English label in English, else the reason.
  if (at < 0) return worded ?? (lang === "en" ? c.label : t(`ai.checkpoint.reason.${c.reason}` as MessageId));
  const vars = { n: at + 1, words: firstWords(users[at].text) };
  return c.reason === "before_turn" ? t("ai.checkpoint.turnBefore", vars) : t("ai.checkpoint.turnAfter", vars);
}

/** What a version took in, in words (for "this takes back"). */
export function versionWhat(t: T, v: VersionSummary, proposals: readonly ProposalView[]): string {
  const o = v.origin;
  switch (o.type) {
    case "aiProposal": {
      const summary = proposals.find((p) => p.id === o.proposalId)?.summary;
      return summary ? t("ai.checkpoint.origin.aiProposal", { summary }) : v.message || t("ai.checkpoint.origin.aiProposalUnnamed");
    }
    case "manual":
      return v.message ? `${t("ai.checkpoint.origin.manual")} · ${v.message}` : t("ai.checkpoint.origin.manual");
    case "autosnapshot":
      return t("ai.checkpoint.origin.autosnapshot");
    case "restore":
      return t("ai.checkpoint.origin.restore", { n: o.from });
    case "checkpoint":
      return t("ai.checkpoint.origin.checkpoint");
    case "pulled":
      return t("ai.checkpoint.origin.pulled");
    case "syncResolution":
      return t("ai.checkpoint.origin.syncResolution");
  }
}

export interface RestorePlan {
  diff: TextDiffResult;
  title: { from: string; to: string } | null;
  /** Versions after the checkpoint's, newest last. */
  undone: VersionSummary[];
  /** The version that will keep unsaved edits, when there are any. */
  unsavedAs: number | null;
  savesVersion: number;
}

/** Reads what a restore would change: the text now (after a save of pending typing)
 * against the checkpoint's, and the versions made since. */
export async function planRestore(client: ApiClient, c: Checkpoint, flush: () => Promise<void>): Promise<RestorePlan> {
  await flush().catch(() => undefined);
  const projectId = c.projectId;
  const [project, list] = await Promise.all([readFresh(client, "project.get", { projectId }), readFresh(client, "version.list", { projectId })]);
  let unsaved: boolean;
  if (project.head > 0) {
    const d = await readFresh(client, "version.diff", { projectId, from: project.head });
    unsaved = !d.diff.identical || d.titleChanged;
  } else unsaved = project.source !== "" || project.title !== "";
  let diff: TextDiffResult;
  let title: RestorePlan["title"] = null;
  if (c.workingSource === undefined && c.head > 0) {
    // The checkpoint's text is its head version's: the engine's word-level diff, turned round.
    const d = await readFresh(client, "version.diff", { projectId, from: c.head });
    diff = reverseDiff(d.diff);
    if (d.titleChanged) title = { from: d.newTitle, to: d.oldTitle };
  } else {
    const to = { title: c.workingTitle ?? project.title, source: c.workingSource ?? "" };
    diff = lineDiff(project.source, to.source);
    if (to.title !== project.title) title = { from: project.title, to: to.title };
  }
  const undone = list.versions.filter((v) => v.number > c.head).sort((a, b) => a.number - b.number);
  const unsavedAs = unsaved ? project.head + 1 : null;
  return { diff, title, undone, unsavedAs, savesVersion: project.head + (unsaved ? 2 : 1) };
}
