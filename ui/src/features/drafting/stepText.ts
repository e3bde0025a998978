// How a timeline step is worded: a tool's name in the person's language, a one-line
// summary of its arguments, its result as a preview, a decision's note, a state's icon.
import type { T } from "../../shared/context";
import { has, type Lang, type MessageId, translate } from "../../shared/i18n";
import type { StepState } from "./timeline";

const PREVIEW_CHARS = 4000;

/** The tool's name in the person's language, or as the model knows it. */
export function toolLabel(t: T, lang: "en" | "zh", name: string): string {
  const id = `ai.tool.${name}`;
  return has(lang, id) ? t(id as MessageId) : name;
}

/** JSON pretty-printed when it is JSON, cut to a preview. */
export function preview(text: string): string {
  let out = text;
  try {
    out = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON: show it as it is.
  }
  return out.length > PREVIEW_CHARS ? `${out.slice(0, PREVIEW_CHARS)}…` : out;
}

/** The keys whose text says what a step does, first to last (a platform id is worded). */
const SUMMARY_KEYS = ["summary", "label", "question", "query", "title", "permission", "text", "body"];

/** A one-line summary of a call's arguments: its first short string field. */
export function argSummary(t: T, lang: Lang, args: string): string {
  const cut = (value: string) => (value.length > 60 ? `${value.slice(0, 60)}…` : value);
  try {
    const v = (JSON.parse(args) ?? {}) as Record<string, unknown>;
    for (const key of SUMMARY_KEYS) {
      const value = v[key];
      if (typeof value === "string" && value.trim()) return cut(value);
    }
    // An id the core defines is said in the person's language, never as the id.
    if (typeof v.platform === "string" && has(lang, `platform.${v.platform}`)) return t(`platform.${v.platform}` as MessageId);
    for (const [key, value] of Object.entries(v)) {
      if (key !== "platform" && typeof value === "string" && value.trim()) return cut(value);
    }
  } catch {
    // Arguments the model sent broken are shown in full when expanded.
  }
  return "";
}

export const STATE_ICON: Record<StepState, string> = {
  queued: "○",
  running: "◔",
  waiting: "◆",
  done: "✓",
  failed: "✕",
  cancelled: "⊘",
  denied: "⊖",
  blocked: "⊘",
};

/** A decision's note: the core's worded reason (`ai.approval.note.<id>`), else the
 * person's own words. */
export function decisionNote(lang: Lang, noteId: string | null, note: string): string {
  const id = noteId ? `ai.approval.note.${noteId}` : "";
  return id && has(lang, id) ? translate(lang, id as MessageId) : note;
}
