// The optimize run's plain parts, outside React: the choices the form offers, the
// stage lines' wording, which runs can be resumed or still wait for review.
import type { Goal, Intensity, OptimizeApplyResult, Platform, ProposalView, Run, RunTarget } from "../../shared/api/generated";
import type { HunkDecision } from "../review";
import type { T } from "../../shared/context";
import { has, type Lang, type MessageId } from "../../shared/i18n";

export const PLATFORMS: Platform[] = ["wechat", "zhihu", "x", "douyin", "xiaohongshu"];
export const GOALS: Goal[] = ["recommendation", "views", "ctr", "completion", "engagement", "conversion"];
export const INTENSITIES: Intensity[] = ["conservative", "balanced", "aggressive"];
export const CONSTRAINTS = ["keepVoice", "keepTitle", "keepStructure", "avoidClickbait"] as const;
export type ConstraintKey = (typeof CONSTRAINTS)[number];

export interface OptimizeDialogProps {
  projectId: string;
  /** The project's platforms (the default targets). */
  platforms: Platform[];
  /** "Optimize this draft": only this platform. */
  draft?: Platform | null;
  /** Saves the editor's pending text first, so the run reads what is on screen. */
  flush: () => Promise<void>;
  /** After an apply wrote something: reload the project, drafts and history. */
  onApplied: (result: OptimizeApplyResult) => void;
  onClose: () => void;
  /** Opens Settings → Models (offered when no model is set up). */
  onSetUpModel?: () => void;
  /** After the dialog saved compiled drafts: reload the drafts. */
  onDraftsSaved?: () => void;
}

export interface StageLine {
  stage: string;
  state: string;
  message: string;
}

/** "Adapting (X)" for `platform:x`. */
export function stageLabel(t: T, stage: string): string {
  const [name, detail] = stage.split(":");
  const platform = detail && (PLATFORMS as string[]).includes(detail) ? t(`platform.${detail}` as MessageId) : detail;
  return t(`optimize.stage.${name}` as MessageId) + (platform ? ` (${platform})` : "");
}

/** A stage's line after its name: "done", or what it is doing. English shows the run's
 * own specific words; other languages the state's wording (the specifics, such as the
 * terms still flagged, are in the review). */
export function stageState(t: T, lang: Lang, s: StageLine): string {
  if (s.state === "done") return t("optimize.done");
  // The stage's name says what it does ("Adapting (WeChat)"); its own start line only
  // repeats it, with the platform's id.
  if (s.state === "started" && s.stage !== "resume") return t("optimize.state.started");
  const id = `optimize.state.${s.state}`;
  return lang === "en" || !has(lang, id) ? s.message : t(id as MessageId);
}

/** Whether `optimize.resume` can take the run up again. */
export function resumable(r: Run): boolean {
  return r.status === "interrupted" || (r.status === "failed" && r.resumable);
}

/** A finished run whose package still waits for the person ("Decide later", a reload):
 * ready or partly applied, with a proposal still open. */
export function unreviewed(r: Run): boolean {
  return (r.status === "ready" || r.status === "partly_applied") && r.targets.some((x) => x.outcome === "pending" && (x.proposalId != null || x.titleProposalId != null));
}

/** How many unreviewed runs the dialog lists (newest first). */
export const MAX_UNREVIEWED = 5;

export function targetKey(t: RunTarget): string {
  return t.target.type === "draft" ? t.target.platform : "source";
}

/** For each target's proposal (by target key) with a hunk rejected, the hunks kept (by
 * proposal id): what `optimize.apply` takes; a proposal with none rejected is taken whole. */
export function keptHunks(proposals: Record<string, ProposalView>, decisions: Record<string, Record<string, HunkDecision>>): Record<string, string[]> {
  const hunks: Record<string, string[]> = {};
  for (const [key, view] of Object.entries(proposals)) {
    const d = decisions[key] ?? {};
    const rejected = view.hunks.filter((h) => d[h.id] === "rejected");
    if (rejected.length > 0) hunks[view.id] = view.hunks.filter((h) => d[h.id] !== "rejected").map((h) => h.id);
  }
  return hunks;
}
