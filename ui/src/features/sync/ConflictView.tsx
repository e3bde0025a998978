// The resolution of a sync conflict as a three-way merge view. Left, the merge in
// document order: edits only one side made are taken automatically and marked; each
// place where both sides changed the same lines is listed at the top, numbered and marked
// in the text, with the person's side and the server's side next to each other and a
// choice of mine / theirs / both (the base on request). Right, the result: the choices
// write into it, it can be edited freely, and what it holds is exactly what "use this
// result" saves (`sync.resolve` with choice "edited"). Nothing is written until the
// person decides; every choice makes a new version and nothing is overwritten. Closing
// (Esc or "decide later") writes nothing and keeps the choices for when it opens again.
//
// The regions (and the title's merge) are the core's: `sync.conflicts` sends them from
// the same three-way merge that decides whether the conflict merges cleanly, so this
// view draws them and derives nothing (./result.ts only turns choices into text).

import { diff } from "@codemirror/merge";
import { type KeyboardEvent, type ReactNode, useEffect, useMemo, useRef, useState } from "react";
import { toClientError, type ClientError } from "../../shared/api/client";
import type { SyncConflictView, SyncResolveChoice } from "../../shared/api/generated";
import { useWrite } from "../../shared/api/query";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { type Choice, chosenText, compose, mapRange, type Merge3, type OverlapSegment, type Range, segmentsOf, type Side, textChange } from "./result";

/** What the person has done in the view so far. */
interface Draft {
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

// The drafts of conflicts closed undecided, until Inkstone closes: "decide later" keeps
// what was chosen and typed. Keyed by the conflict's id and update time (a re-merged
// conflict is another merge).
const drafts = new Map<string, Draft>();

const draftKey = (c: SyncConflictView) => `${c.id}@${c.updatedAt}`;

/** The lines of `text`, each with its "\n", to fold unchanged ones away. */
const splitLines = (text: string) => text.split(/(?<=\n)/).filter((l) => l !== "");

function initialDraft(c: SyncConflictView, m: Merge3, mergedTitle: string | null): Draft {
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

const asciiWord = (c: string | undefined) => !!c && /[A-Za-z0-9_]/.test(c);

/** `text` with what changed since `from` marked: character by character, which is word
 * level for Chinese; a change inside a Latin word marks the whole word. */
function marked(from: string, text: string): ReactNode {
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

/** A short excerpt that names a place: its first non-empty line. */
function excerpt(...texts: string[]): string {
  for (const t of texts) {
    const line = t.split("\n").find((l) => l.trim());
    if (line) return line.trim().length > 24 ? `${line.trim().slice(0, 24)}…` : line.trim();
  }
  return "";
}

const CONTEXT = 2;

/** How far down a textarea's text position `at` lies (its wrapped lines counted), by a
 * hidden copy of the box: the browser reveals the end of a selection, not its start. */
function offsetInBox(box: HTMLTextAreaElement, at: number): number {
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

export function ConflictView({ conflict, onClose, onResolved }: { conflict: SyncConflictView; onClose: () => void; onResolved: () => void }) {
  const { t, toast } = useApp();
  const mergedTitle = conflict.mergedTitle ?? null;
  const titleConflict = mergedTitle === null;
  const merge = useMemo(() => segmentsOf(conflict.regions), [conflict]);
  const [draft, setDraft] = useState<Draft>(() => drafts.get(draftKey(conflict)) ?? initialDraft(conflict, merge, mergedTitle));
  const [expanded, setExpanded] = useState<Set<number>>(() => new Set());
  const [error, setError] = useState<ClientError | null>(null);
  const resolveWrite = useWrite("sync.resolve", { onError: (e) => setError(toClientError(e)) });
  const busy = resolveWrite.isPending;
  const root = useRef<HTMLDivElement>(null);

  // Closing undecided keeps the draft; resolving forgets it.
  const latest = useRef(draft);
  const resolved = useRef(false);
  useEffect(() => {
    latest.current = draft;
  }, [draft]);
  useEffect(() => {
    const key = draftKey(conflict);
    return () => {
      if (resolved.current) drafts.delete(key);
      else drafts.set(key, latest.current);
    };
  }, [conflict]);

  // Focus the first undecided place (the Dialog focused its first control before).
  useEffect(() => {
    root.current?.querySelector<HTMLElement>("[data-testid=conflict-hunk][data-decided=false]")?.focus();
  }, []);

  const places = (titleConflict ? 1 : 0) + merge.overlaps.length;
  const titleDecided = !titleConflict || draft.titleChoice !== undefined || draft.titleEdited;
  const undecided = (titleDecided ? 0 : 1) + merge.overlaps.filter((o) => draft.choices[o.index] === undefined && !draft.edited[o.index]).length;
  const autoChanges = merge.segments.filter((s) => s.kind === "auto").length;
  const author = conflict.theirs.author;

  const choose = (o: OverlapSegment, choice: Choice) =>
    setDraft((d) => {
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
    });
  const chooseTitle = (side: Side) => setDraft((d) => ({ ...d, title: conflict[side].title, titleChoice: side, titleEdited: false }));
  const type = (value: string) =>
    setDraft((d) => {
      const change = textChange(d.text, value);
      if (!change) return d;
      const mapped = d.ranges.map((r) => mapRange(r, change, d.text.length));
      return { ...d, text: value, ranges: mapped.map((m) => m.range), edited: d.edited.map((e, j) => e || mapped[j].touched) };
    });
  /** An overlap typed over together with another one: a choice would replace both. */
  const entangled = (i: number) => {
    const r = draft.ranges[i];
    return draft.ranges.some((x, j) => j !== i && x.from < r.to && r.from < x.to);
  };

  const resolve = async (choice: SyncResolveChoice) => {
    setError(null);
    const params = choice === "edited" ? { conflictId: conflict.id, choice, title: draft.title, source: draft.text } : { conflictId: conflict.id, choice };
    const result = await resolveWrite.run(params);
    if (!result) return;
    resolved.current = true;
    toast(t("sync.resolved", { n: result.version.number }));
    onResolved();
  };

  /** A place's text selected in the result, to edit it there. */
  const editInResult = (from: Element, i: number | "title") => {
    const view = from.closest(".conflict-view");
    if (i === "title") return view?.querySelector<HTMLInputElement>("[data-testid=conflict-title]")?.select();
    const r = draft.ranges[i];
    const box = view?.querySelector<HTMLTextAreaElement>("[data-testid=conflict-result]");
    if (!box || !r) return;
    box.focus();
    box.setSelectionRange(r.from, r.to, "backward");
    box.scrollTop = Math.max(0, offsetInBox(box, r.from) - 2 * parseFloat(getComputedStyle(box).lineHeight || "24"));
  };
  const focusPlace = (n: number) => root.current?.querySelector<HTMLElement>(`[data-testid=conflict-hunk][data-place="${n}"]`)?.focus();
  const onHunkKey = (e: KeyboardEvent, act: (c: Choice) => void, both: boolean, edit: (from: Element) => void) => {
    if (e.target !== e.currentTarget || e.nativeEvent.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Enter") {
      e.preventDefault();
      return edit(e.currentTarget);
    }
    const c = ({ "1": "mine", "2": "theirs", "3": both ? "both" : undefined } as Record<string, Choice | undefined>)[e.key];
    if (c) {
      e.preventDefault();
      act(c);
    }
  };

  const where = (o: OverlapSegment) => t("sync.place.line", { n: o.mineLine + 1 });
  const placeLabel = (n: number, whereText: string) => t("sync.place.label", { i: n, n: places, where: whereText });
  const stateOf = (choice: Choice | undefined, edited: boolean) => (edited ? "edited" : (choice ?? "undecided"));
  const badge = (state: string) => (
    <span className={`badge conflict-badge conflict-badge-${state}`} data-testid="conflict-hunk-state">
      {t(`sync.hunk.${state}` as MessageId)}
    </span>
  );
  const choiceButtons = (current: Choice | undefined, act: (c: Choice) => void, both: boolean, blocked: string | null, edit: (from: Element) => void) => (
    <span className="conflict-choices" role="group" aria-label={t("sync.choose")}>
      {(["mine", "theirs", ...(both ? ["both"] : [])] as Choice[]).map((c, k) => (
        <button
          key={c}
          type="button"
          className="small-btn"
          tabIndex={-1}
          data-choice={c}
          aria-pressed={current === c}
          disabled={busy || !!blocked}
          title={blocked ?? undefined}
          onClick={() => act(c)}
        >
          {t(`sync.choice.${c}` as MessageId)} <kbd>{k + 1}</kbd>
        </button>
      ))}
      <button type="button" className="small-btn" tabIndex={-1} data-testid="conflict-edit-in-result" onClick={(e) => edit(e.currentTarget)}>
        {t("sync.editInResult")} <kbd>⏎</kbd>
      </button>
    </span>
  );
  const side = (label: string, cls: string, base: string, text: string, testId: string, removedKey: MessageId = "sync.removed") => (
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

  const titlePlace = titleConflict ? (
    <div
      className="conflict-hunk"
      tabIndex={0}
      role="group"
      aria-label={placeLabel(1, t("sync.place.title"))}
      data-testid="conflict-hunk"
      data-place={1}
      data-decided={titleDecided}
      data-state={stateOf(draft.titleChoice, draft.titleEdited)}
      onKeyDown={(e) => onHunkKey(e, (c) => c !== "both" && chooseTitle(c), false, (el) => editInResult(el, "title"))}
    >
      <div className="conflict-hunk-head">
        <span className="conflict-marker" aria-hidden="true">
          1
        </span>
        <span className="conflict-hunk-title">{t("sync.place.title")}</span>
        {badge(stateOf(draft.titleChoice, draft.titleEdited))}
        <span className="spacer" />
        {choiceButtons(draft.titleChoice, (c) => c !== "both" && chooseTitle(c), false, null, (el) => editInResult(el, "title"))}
      </div>
      {draft.showBase && side(t("sync.base"), "conflict-side-base", "", conflict.base.title, "conflict-hunk-base")}
      <div className="conflict-pair">
        {side(t("sync.mine"), "conflict-side-mine", conflict.base.title, conflict.mine.title, "conflict-hunk-mine")}
        {side(t("sync.theirs", { author }), "conflict-side-theirs", conflict.base.title, conflict.theirs.title, "conflict-hunk-theirs")}
      </div>
    </div>
  ) : null;

  const offset = titleConflict ? 1 : 0;
  const lastSegment = merge.segments.length - 1;
  const segments = merge.segments.map((s, i) => {
    if (s.kind === "same") {
      const lines = splitLines(s.text);
      const head = i === 0 ? 0 : CONTEXT;
      const tail = i === lastSegment ? 0 : CONTEXT;
      if (expanded.has(i) || lines.length <= head + tail + 1)
        return (
          <pre key={i} className="conflict-text conflict-same">
            {s.text}
          </pre>
        );
      const hidden = lines.length - head - tail;
      return (
        <div key={i} className="conflict-same">
          {head > 0 && <pre className="conflict-text">{lines.slice(0, head).join("")}</pre>}
          <button type="button" className="link conflict-fold" data-testid="conflict-fold" onClick={() => setExpanded((x) => new Set(x).add(i))}>
            {t("sync.unchanged", { n: hidden })}
          </button>
          {tail > 0 && <pre className="conflict-text">{lines.slice(lines.length - tail).join("")}</pre>}
        </div>
      );
    }
    if (s.kind === "auto") {
      const label = t(`sync.auto.${s.side}`, { author });
      return (
        <div key={i} className={`conflict-auto conflict-from-${s.side}`} data-testid="conflict-auto-change" data-side={s.side}>
          <span className="conflict-auto-label small">{label}</span>
          {(draft.showBase || !s.text) && s.base && (
            <pre className="conflict-text conflict-auto-base">
              <del>{s.base.replace(/\n$/, "")}</del>
            </pre>
          )}
          {s.text ? <pre className="conflict-text">{marked(s.base, s.text)}</pre> : <p className="small muted">{t("sync.removed")}</p>}
        </div>
      );
    }
    const n = s.index + 1 + offset;
    const choice = draft.choices[s.index];
    const edited = draft.edited[s.index];
    const blocked = entangled(s.index) ? t("sync.entangled") : null;
    const act = (c: Choice) => !blocked && choose(s, c);
    return (
      <div
        key={i}
        className="conflict-hunk"
        tabIndex={0}
        role="group"
        aria-label={placeLabel(n, where(s))}
        data-testid="conflict-hunk"
        data-place={n}
        data-decided={choice !== undefined || edited}
        data-state={stateOf(choice, edited)}
        onKeyDown={(e) => onHunkKey(e, act, true, (el) => editInResult(el, s.index))}
      >
        <div className="conflict-hunk-head">
          <span className="conflict-marker" aria-hidden="true">
            {n}
          </span>
          <span className="conflict-hunk-title">{where(s)}</span>
          {badge(stateOf(choice, edited))}
          <span className="spacer" />
          {choiceButtons(choice, act, true, blocked, (el) => editInResult(el, s.index))}
        </div>
        {draft.showBase && side(t("sync.base"), "conflict-side-base", "", s.base, "conflict-hunk-base", "sync.baseEmpty")}
        <div className="conflict-pair">
          {side(t("sync.mine"), "conflict-side-mine", s.base, s.mine, "conflict-hunk-mine")}
          {side(t("sync.theirs", { author }), "conflict-side-theirs", s.base, s.theirs, "conflict-hunk-theirs")}
        </div>
      </div>
    );
  });

  return (
    <Dialog title={t("sync.conflictTitle")} onClose={onClose} testId="sync-conflict" wide>
      <div className="conflict-view" ref={root}>
        <div className="conflict-head">
          <p className="small">{conflict.kind === "push" ? t("sync.conflictPush") : t("sync.conflictPull")}</p>
          {places > 0 ? (
            <div className="warning conflict-summary" data-testid="conflict-overlaps">
              <p>{t("sync.overlaps", { n: places })}</p>
              <ol className="conflict-places" aria-label={t("sync.placesList")}>
                {titleConflict && (
                  <li>
                    <button type="button" className="small-btn" data-testid="conflict-place" data-decided={titleDecided} onClick={() => focusPlace(1)}>
                      <span className="conflict-marker">1</span> {t("sync.place.title")}
                      {titleDecided && <span aria-label={t("sync.decided")}> ✓</span>}
                    </button>
                  </li>
                )}
                {merge.overlaps.map((o) => {
                  const n = o.index + 1 + offset;
                  const decided = draft.choices[o.index] !== undefined || draft.edited[o.index];
                  return (
                    <li key={n}>
                      <button type="button" className="small-btn" data-testid="conflict-place" data-decided={decided} onClick={() => focusPlace(n)}>
                        <span className="conflict-marker">{n}</span> {where(o)}
                        <span className="muted"> · {excerpt(o.mine, o.theirs, o.base)}</span>
                        {decided && <span aria-label={t("sync.decided")}> ✓</span>}
                      </button>
                    </li>
                  );
                })}
              </ol>
            </div>
          ) : (
            <p className="small" data-testid="conflict-clean">
              {t("sync.mergesCleanly")}
            </p>
          )}
          <div className="row conflict-tools">
            {autoChanges > 0 && (
              <span className="small muted" data-testid="conflict-auto">
                {t("sync.autoMerged", { n: autoChanges })}
              </span>
            )}
            <span className="spacer" />
            <button type="button" className="small-btn" data-testid="conflict-show-base" aria-pressed={draft.showBase} onClick={() => setDraft((d) => ({ ...d, showBase: !d.showBase }))}>
              {t("sync.showBase")}
            </button>
          </div>
        </div>
        <div className="conflict-body">
          <section className="conflict-doc" aria-label={t("sync.mergeView")} data-testid="conflict-doc">
            {titlePlace}
            {segments}
          </section>
          <section className="conflict-result">
            <label className="field">
              <span className="small muted">{t("sync.titleLabel")}</span>
              <input
                data-testid="conflict-title"
                value={draft.title}
                onChange={(e) => {
                  const value = e.target.value;
                  setDraft((d) => ({ ...d, title: value, titleEdited: true }));
                }}
              />
            </label>
            <label className="field conflict-result-field">
              <span className="small muted">{t("sync.result")}</span>
              <textarea data-testid="conflict-result" rows={12} value={draft.text} onChange={(e) => type(e.target.value)} />
            </label>
            <p className="small muted">{t("sync.resultHint")}</p>
          </section>
        </div>
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        <div className="conflict-actions">
          <button
            type="button"
            className="primary"
            disabled={busy || undecided > 0 || !draft.title.trim()}
            data-testid="conflict-edited"
            onClick={() => void resolve("edited")}
          >
            {t("sync.takeEdited")}
          </button>
          {(undecided > 0 || !draft.title.trim()) && (
            <span className="small warning-text" data-testid="conflict-undecided">
              {undecided > 0 ? t("sync.undecided", { n: undecided }) : t("sync.titleRequired")}
            </span>
          )}
          <span className="spacer" />
          <button type="button" disabled={busy} data-testid="conflict-mine-btn" onClick={() => void resolve("mine")}>
            {t("sync.keepMine")}
          </button>
          <button type="button" disabled={busy} data-testid="conflict-theirs-btn" onClick={() => void resolve("theirs")}>
            {t("sync.takeTheirs")}
          </button>
          <button type="button" data-testid="conflict-later" onClick={onClose}>
            {t("sync.later")}
          </button>
        </div>
        <p className="small muted conflict-keys">{t("sync.keys")}</p>
      </div>
    </Dialog>
  );
}
