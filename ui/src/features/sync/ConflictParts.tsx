// The pieces of a conflict's merge view: one place to decide (the person's side and the
// server's next to each other, the base on request, and the choice buttons), a run of
// unchanged lines folded to its context, and an edit taken automatically.
import { diff } from "@codemirror/merge";
import { type KeyboardEvent, type ReactNode, useState } from "react";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import type { Choice, Segment } from "./result";

const asciiWord = (c: string | undefined) => !!c && /[A-Za-z0-9_]/.test(c);

/** `text` with what changed since `from` marked: character by character, which is word
 * level for Chinese; a change inside a Latin word marks the whole word. */
export function marked(from: string, text: string): ReactNode {
  if (!from || !text || from.length + text.length > 40_000) return text;
  const out: ReactNode[] = [];
  let at = 0;
  for (const c of diff(from, text, { scanLimit: 500 })) {
    let start = Math.max(c.fromB, at);
    if (c.toB <= start) continue;
    let end = c.toB;
    while (start > at && asciiWord(text[start - 1]) && asciiWord(text[start])) start--;
    while (end < text.length && asciiWord(text[end - 1]) && asciiWord(text[end])) end++;
    if (start > at) out.push(text.slice(at, start));
    out.push(
      <mark key={start} className="conflict-ins">
        {text.slice(start, end)}
      </mark>,
    );
    at = end;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** How far down a textarea's text position `at` lies (its wrapped lines counted), by a
 * hidden copy of the box: the browser reveals the end of a selection, not its start. */
export function offsetInBox(box: HTMLTextAreaElement, at: number): number {
  const style = getComputedStyle(box);
  const copy = document.createElement("div");
  for (const p of ["font", "lineHeight", "letterSpacing", "padding", "border", "boxSizing", "whiteSpace", "overflowWrap", "wordBreak", "tabSize"] as const) copy.style[p] = style[p];
  Object.assign(copy.style, { position: "absolute", visibility: "hidden", top: "0", left: "-9999px", width: `${box.clientWidth}px`, whiteSpace: "pre-wrap", overflowWrap: "break-word" });
  copy.textContent = box.value.slice(0, at);
  const mark = document.createElement("span");
  mark.textContent = "\u200b";
  copy.append(mark);
  document.body.append(copy);
  const top = mark.offsetTop;
  copy.remove();
  return top;
}

/** One side of a place: its text with what changed since the base marked, or "removed". */
export function SideText({ label, cls, base, text, testId, removedKey = "sync.removed" }: { label: string; cls: string; base: string; text: string; testId: string; removedKey?: MessageId }) {
  const { t } = useApp();
  return (
    <div className={`conflict-side ${cls}`}>
      <span className="conflict-side-label small">{label}</span>
      {text ? (
        <pre className="conflict-text" data-testid={testId}>
          {marked(base, text)}
        </pre>
      ) : (
        <p className="conflict-text small muted" data-testid={testId}>
          {t(removedKey)}
        </p>
      )}
    </div>
  );
}

export interface PlaceProps {
  /** The place's number (the title, when it conflicts, is 1). */
  n: number;
  heading: string;
  ariaLabel: string;
  choice: Choice | undefined;
  edited: boolean;
  /** Whether "both" is offered (not for the title). */
  both: boolean;
  /** Why a choice cannot be made now, or null. */
  blocked: string | null;
  busy: boolean;
  onChoose: (c: Choice) => void;
  /** Selects the place's text in the result, to edit it there. */
  onEdit: (from: Element) => void;
  /** The base (when shown) and both sides. */
  children: ReactNode;
}

/** A place where both sides changed the same text: 1/2/3 choose, Enter edits in the result. */
export function Place({ n, heading, ariaLabel, choice, edited, both, blocked, busy, onChoose, onEdit, children }: PlaceProps) {
  const { t } = useApp();
  const state = edited ? "edited" : (choice ?? "undecided");
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.target !== e.currentTarget || e.nativeEvent.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Enter") {
      e.preventDefault();
      return onEdit(e.currentTarget);
    }
    const c = ({ "1": "mine", "2": "theirs", "3": both ? "both" : undefined } as Record<string, Choice | undefined>)[e.key];
    if (c) {
      e.preventDefault();
      onChoose(c);
    }
  };
  return (
    <div className="conflict-hunk" tabIndex={0} role="group" aria-label={ariaLabel} data-testid="conflict-hunk" data-place={n} data-decided={choice !== undefined || edited} data-state={state} onKeyDown={onKeyDown}>
      <div className="conflict-hunk-head">
        <span className="conflict-marker" aria-hidden="true">
          {n}
        </span>
        <span className="conflict-hunk-title">{heading}</span>
        <span className={`badge conflict-badge conflict-badge-${state}`} data-testid="conflict-hunk-state">
          {t(`sync.hunk.${state}` as MessageId)}
        </span>
        <span className="spacer" />
        <span className="conflict-choices" role="group" aria-label={t("sync.choose")}>
          {(["mine", "theirs", ...(both ? ["both"] : [])] as Choice[]).map((c, k) => (
            <button key={c} type="button" className="small-btn" tabIndex={-1} data-choice={c} aria-pressed={choice === c} disabled={busy || !!blocked} title={blocked ?? undefined} onClick={() => onChoose(c)}>
              {t(`sync.choice.${c}` as MessageId)} <kbd>{k + 1}</kbd>
            </button>
          ))}
          <button type="button" className="small-btn" tabIndex={-1} data-testid="conflict-edit-in-result" onClick={(e) => onEdit(e.currentTarget)}>
            {t("sync.editInResult")} <kbd>⏎</kbd>
          </button>
        </span>
      </div>
      {children}
    </div>
  );
}

/** Lines kept around a folded run of unchanged ones. */
const CONTEXT = 2;

/** The lines of `text`, each with its "\n", to fold unchanged ones away. */
const splitLines = (text: string) => text.split(/(?<=\n)/).filter((l) => l !== "");

/** Unchanged lines, folded to their context until opened (none before the first segment or after the last). */
export function SameSegment({ text, first, last }: { text: string; first: boolean; last: boolean }) {
  const { t } = useApp();
  const [expanded, setExpanded] = useState(false);
  const lines = splitLines(text);
  const head = first ? 0 : CONTEXT;
  const tail = last ? 0 : CONTEXT;
  if (expanded || lines.length <= head + tail + 1) return <pre className="conflict-text conflict-same">{text}</pre>;
  return (
    <div className="conflict-same">
      {head > 0 && <pre className="conflict-text">{lines.slice(0, head).join("")}</pre>}
      <button type="button" className="link conflict-fold" data-testid="conflict-fold" onClick={() => setExpanded(true)}>
        {t("sync.unchanged", { n: lines.length - head - tail })}
      </button>
      {tail > 0 && <pre className="conflict-text">{lines.slice(lines.length - tail).join("")}</pre>}
    </div>
  );
}

/** An edit taken as it is (one side's, or the same on both), marked with whose it is. */
export function AutoSegment({ segment, author, showBase }: { segment: Extract<Segment, { kind: "auto" }>; author: string; showBase: boolean }) {
  const { t } = useApp();
  const s = segment;
  return (
    <div className={`conflict-auto conflict-from-${s.side}`} data-testid="conflict-auto-change" data-side={s.side}>
      <span className="conflict-auto-label small">{t(`sync.auto.${s.side}`, { author })}</span>
      {(showBase || !s.text) && s.base && (
        <pre className="conflict-text conflict-auto-base">
          <del>{s.base.replace(/\n$/, "")}</del>
        </pre>
      )}
      {s.text ? <pre className="conflict-text">{marked(s.base, s.text)}</pre> : <p className="small muted">{t("sync.removed")}</p>}
    </div>
  );
}
