// A proposal's change in CodeMirror's merge view (@codemirror/merge): inline (one
// editor, deletions shown above insertions) or side by side. The chunks are the
// proposal's own hunks (the diff is given to CodeMirror, not recomputed), with
// character-level highlighting inside each — word-level for Chinese, where every
// character is a word. Each hunk gets a bar with its decision, its new findings and
// Accept (Enter) / Reject (Backspace), focusable in order.
import { Change, MergeView, presentableDiff, unifiedMergeView } from "@codemirror/merge";
import { EditorState, type Extension, RangeSetBuilder, StateEffect, StateField } from "@codemirror/state";
import { Decoration, type DecorationSet, EditorView, WidgetType } from "@codemirror/view";
import { useEffect, useLayoutEffect, useRef } from "react";
import type { ProposalHunk } from "../../shared/api/generated";

export type HunkDecision = "accepted" | "rejected" | "pending";

export interface HunkBarState {
  id: string;
  /** 1-based position among the hunks, and how many there are. */
  index: number;
  total: number;
  decision: HunkDecision;
  /** Decided for good (sent to the backend); no buttons any more. */
  final: boolean;
  /** Why this hunk cannot be accepted now (a stale proposal): Accept is disabled, with
   * this as its title, and Enter does nothing; Reject still works. */
  acceptBlocked?: string | null;
  findings: { severity: string; message: string; suggestion: string | null }[];
}

export interface BarLabels {
  title: (index: number, total: number) => string;
  accept: string;
  reject: string;
  undo: string;
  accepted: string;
  rejected: string;
}

export type HunkAction = "accept" | "reject" | "undo";

/** Offsets (UTF-16) where each line of `text` starts, lines ending with their "\n". */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

function offsetOfLine(starts: number[], textLength: number, line: number): number {
  return line < starts.length ? starts[line] : textLength;
}

/** The hunks as CodeMirror changes: each hunk's span, refined by a character diff. */
export function hunkChanges(a: string, b: string, hunks: readonly ProposalHunk[]): Change[] {
  const startsA = lineStarts(a);
  const startsB = lineStarts(b);
  const out: Change[] = [];
  for (const h of hunks) {
    const fromA = offsetOfLine(startsA, a.length, h.oldStart);
    const fromB = offsetOfLine(startsB, b.length, h.newStart);
    const oldText = a.slice(fromA, offsetOfLine(startsA, a.length, h.oldStart + h.oldLen));
    const newText = b.slice(fromB, offsetOfLine(startsB, b.length, h.newStart + h.newLen));
    for (const c of presentableDiff(oldText, newText)) out.push(new Change(fromA + c.fromA, fromA + c.toA, fromB + c.fromB, fromB + c.toB));
  }
  return out;
}

/** Where a hunk's bar sits in the proposed text: before the hunk's first line. */
export function barPosition(b: string, hunk: ProposalHunk): { pos: number; side: number } {
  const starts = lineStarts(b);
  const pos = hunk.newStart < starts.length ? starts[hunk.newStart] : b.length;
  return { pos, side: pos === b.length && b.length > 0 ? 1 : -1 };
}

type Act = (id: string, action: HunkAction) => void;

class HunkBar extends WidgetType {
  constructor(
    readonly bar: HunkBarState,
    readonly labels: BarLabels,
    readonly act: { current: Act },
  ) {
    super();
  }
  override eq(other: HunkBar) {
    return other.bar === this.bar && other.labels === this.labels;
  }
  override toDOM() {
    const { bar, labels } = this;
    const el = document.createElement("div");
    el.className = `hunk-bar hunk-${bar.decision}`;
    el.tabIndex = 0;
    el.dataset.testid = "hunk";
    el.dataset.hunk = bar.id;
    el.dataset.decision = bar.decision;
    el.setAttribute("role", "group");
    el.setAttribute("aria-label", labels.title(bar.index, bar.total));
    const title = document.createElement("span");
    title.className = "hunk-title";
    title.textContent = labels.title(bar.index, bar.total);
    el.append(title);
    if (bar.decision !== "pending") {
      const state = document.createElement("span");
      state.className = `badge badge-${bar.decision}`;
      state.textContent = bar.decision === "accepted" ? labels.accepted : labels.rejected;
      el.append(state);
    }
    const spacer = document.createElement("span");
    spacer.className = "spacer";
    el.append(spacer);
    const button = (text: string, action: HunkAction, primary = false, blocked: string | null = null) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = text;
      b.tabIndex = -1;
      b.dataset.act = action;
      if (primary) b.className = "primary";
      if (blocked) {
        b.disabled = true;
        b.title = blocked;
      }
      b.addEventListener("click", (e) => {
        e.preventDefault();
        this.act.current(bar.id, action);
      });
      return b;
    };
    if (!bar.final) {
      if (bar.decision === "pending") el.append(button(`${labels.accept} ⏎`, "accept", true, bar.acceptBlocked ?? null), button(`${labels.reject} ⌫`, "reject"));
      else el.append(button(labels.undo, "undo"));
    }
    for (const f of bar.findings) {
      const p = document.createElement("p");
      p.className = `hunk-finding sev-${f.severity}`;
      p.dataset.testid = "hunk-finding";
      p.textContent = f.suggestion ? `${f.message} — ${f.suggestion}` : f.message;
      el.append(p);
    }
    el.addEventListener("keydown", (e) => {
      if (e.isComposing || bar.final) return;
      if (e.key === "Enter" && bar.decision === "pending") {
        e.preventDefault();
        if (!bar.acceptBlocked) this.act.current(bar.id, "accept");
      } else if ((e.key === "Backspace" || e.key === "Delete") && bar.decision === "pending") {
        e.preventDefault();
        this.act.current(bar.id, "reject");
      }
    });
    return el;
  }
  override ignoreEvent() {
    return true;
  }
}

const setBars = StateEffect.define<DecorationSet>();
const barField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    for (const e of tr.effects) if (e.is(setBars)) return e.value;
    return deco.map(tr.changes);
  },
  provide: (f) => EditorView.decorations.from(f),
});

function buildBars(doc: string, hunks: readonly ProposalHunk[], bars: readonly HunkBarState[], labels: BarLabels, act: { current: Act }): DecorationSet {
  const placed = hunks
    .map((h) => ({ h, bar: bars.find((b) => b.id === h.id), at: barPosition(doc, h) }))
    .filter((x): x is { h: ProposalHunk; bar: HunkBarState; at: { pos: number; side: number } } => !!x.bar)
    .sort((x, y) => x.at.pos - y.at.pos || x.at.side - y.at.side);
  const builder = new RangeSetBuilder<Decoration>();
  for (const { bar, at } of placed) builder.add(at.pos, at.pos, Decoration.widget({ widget: new HunkBar(bar, labels, act), block: true, side: at.side }));
  return builder.finish();
}

const common: Extension = [EditorView.editable.of(false), EditorState.readOnly.of(true), EditorView.lineWrapping];

export interface MergeDiffProps {
  a: string;
  b: string;
  /** The proposal's hunks; none to let CodeMirror diff the two texts itself. */
  hunks: readonly ProposalHunk[] | null;
  mode: "inline" | "split";
  bars: readonly HunkBarState[];
  labels: BarLabels;
  onAct: Act;
  ariaLabel: string;
}

export function MergeDiff({ a, b, hunks, mode, bars, labels, onAct, ariaLabel }: MergeDiffProps) {
  const host = useRef<HTMLDivElement>(null);
  const target = useRef<EditorView | null>(null);
  const act = useRef<Act>(onAct);
  useLayoutEffect(() => {
    act.current = onAct;
  });

  // The editors are rebuilt only when the texts, the hunks or the layout change, not
  // when the same proposal arrives again as a new object.
  const hunksRef = useRef(hunks);
  useLayoutEffect(() => {
    hunksRef.current = hunks;
  });
  const hunksKey = hunks ? hunks.map((h) => `${h.id}:${h.contentHash}`).join("|") : null;

  useEffect(() => {
    const parent = host.current;
    const current = hunksRef.current;
    if (!parent) return;
    const diffConfig = current ? { override: (x: string, y: string) => hunkChanges(x, y, current) } : undefined;
    const label = EditorView.contentAttributes.of({ "aria-label": ariaLabel });
    if (mode === "inline") {
      const view = new EditorView({
        parent,
        state: EditorState.create({
          doc: b,
          extensions: [common, label, barField, unifiedMergeView({ original: a, mergeControls: false, highlightChanges: true, gutter: true, syntaxHighlightDeletions: false, allowInlineDiffs: true, ...(diffConfig ? { diffConfig } : {}) })],
        }),
      });
      target.current = view;
      return () => {
        target.current = null;
        view.destroy();
      };
    }
    const merge = new MergeView({
      parent,
      a: { doc: a, extensions: [common, label] },
      b: { doc: b, extensions: [common, label, barField] },
      highlightChanges: true,
      gutter: true,
      ...(diffConfig ? { diffConfig } : {}),
    });
    target.current = merge.b;
    return () => {
      target.current = null;
      merge.destroy();
    };
  }, [a, b, hunksKey, mode, ariaLabel]);

  useEffect(() => {
    const view = target.current;
    const current = hunksRef.current;
    if (!view || !current) return;
    // A bar whose state changed is drawn anew: keep the focus on it.
    const focused = (document.activeElement as HTMLElement | null)?.dataset?.hunk;
    view.dispatch({ effects: setBars.of(buildBars(b, current, bars, labels, act)) });
    if (focused && !view.dom.contains(document.activeElement)) view.dom.querySelector<HTMLElement>(`[data-hunk="${CSS.escape(focused)}"]`)?.focus();
  }, [b, hunksKey, bars, labels, mode, a]);

  return <div ref={host} className={`merge merge-${mode}`} data-testid="merge" data-mode={mode} />;
}
