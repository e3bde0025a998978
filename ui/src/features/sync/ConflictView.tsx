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

import { useEffect, useMemo, useRef, useState } from "react";
import { toClientError, type ClientError } from "../../shared/api/client";
import type { SyncConflictView, SyncResolveChoice } from "../../shared/api/generated";
import { useWrite } from "../../shared/api/query";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { AutoSegment, offsetInBox, Place, SameSegment, SideText } from "./ConflictParts";
import { choose as chooseIn, type Draft, draftKey, entangled, excerpt, initialDraft, typed, undecidedCount } from "./conflictDraft";
import { type Choice, type OverlapSegment, segmentsOf, type Side } from "./result";

// The drafts of conflicts closed undecided, until Inkstone closes: "decide later" keeps
// what was chosen and typed.
const drafts = new Map<string, Draft>();

export function ConflictView({ conflict, onClose, onResolved }: { conflict: SyncConflictView; onClose: () => void; onResolved: () => void }) {
  const { t, toast } = useApp();
  const mergedTitle = conflict.mergedTitle ?? null;
  const titleConflict = mergedTitle === null;
  const merge = useMemo(() => segmentsOf(conflict.regions), [conflict]);
  const [draft, setDraft] = useState<Draft>(() => drafts.get(draftKey(conflict)) ?? initialDraft(conflict, merge, mergedTitle));
  // Kept beside the resolution on purpose: the conflict view is a dialog, and a refused
  // resolve is read with the merge it refuses, which stays as chosen for another try.
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
  const undecided = undecidedCount(draft, merge, titleConflict);
  const autoChanges = merge.segments.filter((s) => s.kind === "auto").length;
  const author = conflict.theirs.author;

  const choose = (o: OverlapSegment, choice: Choice) => setDraft((d) => chooseIn(d, o, choice));
  const chooseTitle = (side: Side) => setDraft((d) => ({ ...d, title: conflict[side].title, titleChoice: side, titleEdited: false }));
  const type = (value: string) => setDraft((d) => typed(d, value));

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
  const where = (o: OverlapSegment) => t("sync.place.line", { n: o.mineLine + 1 });
  const placeLabel = (n: number, whereText: string) => t("sync.place.label", { i: n, n: places, where: whereText });
  const titlePlace = titleConflict ? (
    <Place
      n={1}
      heading={t("sync.place.title")}
      ariaLabel={placeLabel(1, t("sync.place.title"))}
      choice={draft.titleChoice}
      edited={draft.titleEdited}
      both={false}
      blocked={null}
      busy={busy}
      onChoose={(c) => c !== "both" && chooseTitle(c)}
      onEdit={(el) => editInResult(el, "title")}
    >
      {draft.showBase && <SideText label={t("sync.base")} cls="conflict-side-base" base="" text={conflict.base.title} testId="conflict-hunk-base" />}
      <div className="conflict-pair">
        <SideText label={t("sync.mine")} cls="conflict-side-mine" base={conflict.base.title} text={conflict.mine.title} testId="conflict-hunk-mine" />
        <SideText label={t("sync.theirs", { author })} cls="conflict-side-theirs" base={conflict.base.title} text={conflict.theirs.title} testId="conflict-hunk-theirs" />
      </div>
    </Place>
  ) : null;

  const offset = titleConflict ? 1 : 0;
  const lastSegment = merge.segments.length - 1;
  const segments = merge.segments.map((s, i) => {
    if (s.kind === "same") return <SameSegment key={i} text={s.text} first={i === 0} last={i === lastSegment} />;
    if (s.kind === "auto") return <AutoSegment key={i} segment={s} author={author} showBase={draft.showBase} />;
    const n = s.index + 1 + offset;
    const blocked = entangled(draft, s.index) ? t("sync.entangled") : null;
    return (
      <Place
        key={i}
        n={n}
        heading={where(s)}
        ariaLabel={placeLabel(n, where(s))}
        choice={draft.choices[s.index]}
        edited={draft.edited[s.index] ?? false}
        both
        blocked={blocked}
        busy={busy}
        onChoose={(c) => !blocked && choose(s, c)}
        onEdit={(el) => editInResult(el, s.index)}
      >
        {draft.showBase && <SideText label={t("sync.base")} cls="conflict-side-base" base="" text={s.base} testId="conflict-hunk-base" removedKey="sync.baseEmpty" />}
        <div className="conflict-pair">
          <SideText label={t("sync.mine")} cls="conflict-side-mine" base={s.base} text={s.mine} testId="conflict-hunk-mine" />
          <SideText label={t("sync.theirs", { author })} cls="conflict-side-theirs" base={s.base} text={s.theirs} testId="conflict-hunk-theirs" />
        </div>
      </Place>
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
