// Centre overlays: a version diff, a version view, and the conflict chooser.
import { useState } from "react";
import { toClientError } from "../../shared/api/client";
import { useMethod } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { formatFullTime } from "../../shared/i18n";
import { DiffView, type DiffMode } from "../../shared/ui/DiffView";
import { versionMessage } from "../history";
import { merge3 } from "./merge";
import type { Conflict } from "./saver";

export function DiffOverlay({
  projectId,
  from,
  to,
  beforeLoad,
  onChange,
  onClose,
}: {
  projectId: string;
  from: number;
  to: number | null;
  /** Saves the working copy first so the diff shows what is on screen. */
  beforeLoad: () => Promise<void>;
  onChange: (from: number, to: number | null) => void;
  onClose: () => void;
}) {
  const { t } = useApp();
  const [mode, setMode] = useState<DiffMode>("split");
  const versions = useMethod("version.list", { projectId }).data?.versions ?? [];
  // Against the working copy, the copy is saved first so the diff shows what is on screen.
  const diff = useMethod("version.diff", to === null ? { projectId, from } : { projectId, from, to }, { before: to === null ? beforeLoad : undefined });
  // A new pair of versions starts blank, so the old diff never shows under the new title.
  const result = diff.isPlaceholderData ? null : (diff.data ?? null);
  const error = diff.error ? toClientError(diff.error) : null;

  const label = (n: number | null) => (n === null ? t("diff.working") : t("project.head", { n }));
  return (
    <section className="overlay" data-testid="diff-overlay" aria-label={t("diff.title", { from: label(from), to: label(to) })}>
      <header className="overlay-bar">
        <h2 className="overlay-title">{t("diff.title", { from: label(from), to: label(to) })}</h2>
        <label className="small">
          {t("diff.from")}{" "}
          <select value={from} onChange={(e) => onChange(Number(e.target.value), to)} data-testid="diff-from">
            {(versions.length ? versions.map((v) => v.number) : [from]).map((n) => (
              <option key={n} value={n}>
                {label(n)}
              </option>
            ))}
          </select>
        </label>
        <label className="small">
          {t("diff.to")}{" "}
          <select
            value={to === null ? "" : to}
            onChange={(e) => onChange(from, e.target.value === "" ? null : Number(e.target.value))}
            data-testid="diff-to"
          >
            <option value="">{t("diff.working")}</option>
            {versions.map((v) => (
              <option key={v.number} value={v.number}>
                {label(v.number)}
              </option>
            ))}
          </select>
        </label>
        <div className="seg" role="group" aria-label={t("diff.mode")}>
          <button type="button" aria-pressed={mode === "split"} data-testid="diff-split" onClick={() => setMode("split")}>
            {t("diff.split")}
          </button>
          <button type="button" aria-pressed={mode === "inline"} data-testid="diff-inline" onClick={() => setMode("inline")}>
            {t("diff.inline")}
          </button>
        </div>
        <button type="button" onClick={onClose} data-testid="overlay-close">
          {t("common.close")} <kbd>Esc</kbd>
        </button>
      </header>
      <div className="overlay-body">
        {error && <ErrorBanner error={error} />}
        {!result && !error && <p className="muted pad">{t("diff.loading")}</p>}
        {result && (
          <>
            {(!result.diff.identical || result.titleChanged) && (
              <p className="small muted pad" data-testid="diff-summary">
                {t("diff.summary", { ins: result.diff.nInsertions, del: result.diff.nDeletions })}
                {result.titleChanged && ` · ${t("diff.titleChanged", { old: result.oldTitle, new: result.newTitle })}`}
              </p>
            )}
            <DiffView diff={result.diff} mode={mode} identicalLabel={t("diff.identical")} />
          </>
        )}
      </div>
    </section>
  );
}

export function VersionOverlay({
  projectId,
  number,
  onDiff,
  onRestore,
  onClose,
}: {
  projectId: string;
  number: number;
  onDiff: () => void;
  onRestore: () => void;
  onClose: () => void;
}) {
  const { t, lang } = useApp();
  const read = useMethod("version.get", { projectId, number });
  const v = read.data ?? null;
  const error = read.error ? toClientError(read.error) : null;
  return (
    <section className="overlay" data-testid="version-overlay" aria-label={t("project.head", { n: number })}>
      <header className="overlay-bar">
        <h2 className="overlay-title">
          {t("project.head", { n: number })}
          {v && <span className="muted small"> · {v.author} · {formatFullTime(lang, v.createdAt)}</span>}
        </h2>
        <button type="button" onClick={onDiff}>
          {t("history.compare")}
        </button>
        <button type="button" onClick={onRestore}>
          {t("history.restore")}
        </button>
        <button type="button" onClick={onClose}>
          {t("common.close")} <kbd>Esc</kbd>
        </button>
      </header>
      <div className="overlay-body">
        {error && <ErrorBanner error={error} />}
        {v && (
          <article className="version-view">
            <h1 className="doc-title">{v.title}</h1>
            {versionMessage(t, v) && <p className="muted">{versionMessage(t, v)}</p>}
            <pre className="source-view" data-testid="version-source">
              {v.source}
            </pre>
          </article>
        )}
      </div>
    </section>
  );
}

/** Where the newer text of a conflict came from. */
export type ConflictCause =
  | { kind: "teammate"; author: string; n: number }
  | { kind: "resolution"; n: number; author?: string }
  | { kind: "elsewhere" }
  /** Text kept when the editor last went away unsaved, on a base that moved on since. */
  | { kind: "kept" };

export function ConflictOverlay({
  conflict,
  cause,
  onKeepBoth,
  onKeepMine,
  onTakeTheirs,
}: {
  conflict: Conflict;
  cause: ConflictCause;
  /** Merge both sides (the safe default). */
  onKeepBoth: () => void;
  /** Only against the person's own text from another window, never a teammate's. */
  onKeepMine?: () => void;
  onTakeTheirs: () => void;
}) {
  const { t, toast } = useApp();
  const copy = async () => {
    const text = `${conflict.mine.title}\n\n${conflict.mine.source}`;
    try {
      await navigator.clipboard.writeText(text);
      toast(t("conflict.copied"));
    } catch {
      toast(t("conflict.copyFailed"));
    }
  };
  const merged = merge3(conflict.base, conflict.mine, conflict.theirs);
  const title =
    cause.kind === "teammate"
      ? t("conflict.teammate.title", { author: cause.author, n: cause.n })
      : cause.kind === "resolution"
        ? t("conflict.resolution.title", { n: cause.n })
        : cause.kind === "kept"
          ? t("conflict.kept.title")
          : t("conflict.title");
  const body =
    cause.kind === "teammate"
      ? t("conflict.teammate.body", { author: cause.author, n: cause.n })
      : cause.kind === "resolution"
        ? t("conflict.resolution.body", { n: cause.n })
        : cause.kind === "kept"
          ? t("conflict.kept.body")
          : t("conflict.body");
  const theirsLabel =
    cause.kind === "teammate"
      ? t("conflict.theirsVersion", { author: cause.author, n: cause.n })
      : cause.kind === "resolution"
        ? t("conflict.resolutionVersion", { n: cause.n })
        : t("conflict.theirs");
  const takeLabel =
    cause.kind === "teammate"
      ? t("conflict.useTheirs", { author: cause.author })
      : cause.kind === "resolution"
        ? t("conflict.useResolution")
        : t("conflict.takeTheirs");
  return (
    <section className="overlay conflict" role="alertdialog" aria-label={title} data-testid="conflict" data-cause={cause.kind}>
      <header className="overlay-bar">
        <h2 className="overlay-title">{title}</h2>
      </header>
      <p className="pad">{body}</p>
      <div className="conflict-cols">
        <div className="conflict-col" data-testid="conflict-mine">
          <h3>{cause.kind === "elsewhere" ? t("conflict.mine") : cause.kind === "kept" ? t("conflict.mineKept") : t("conflict.mineUnsaved")}</h3>
          <p className="conflict-doc-title">{conflict.mine.title}</p>
          <pre className="source-view">{conflict.mine.source}</pre>
        </div>
        <div className="conflict-col" data-testid="conflict-theirs">
          <h3>{theirsLabel}</h3>
          <p className="conflict-doc-title">{conflict.theirs.title}</p>
          <pre className="source-view">{conflict.theirs.source}</pre>
        </div>
      </div>
      <p className="pad small muted" data-testid="conflict-merge-note">
        {merged.overlaps === 0
          ? t("conflict.mergeClean")
          : t("conflict.mergeOverlaps", { n: merged.overlaps })}
      </p>
      <footer className="overlay-bar">
        <button type="button" className="primary" data-testid="conflict-keep-both" onClick={onKeepBoth}>
          {merged.overlaps === 0 ? t("conflict.mergeBoth") : t("conflict.keepBoth")}
        </button>
        {onKeepMine && (
          <button type="button" data-testid="conflict-keep-mine" onClick={onKeepMine}>
            {t("conflict.keepMine")}
          </button>
        )}
        <button type="button" data-testid="conflict-take-theirs" onClick={onTakeTheirs}>
          {takeLabel}
        </button>
        <button type="button" data-testid="conflict-copy" onClick={() => void copy()}>
          {t("conflict.copyMine")}
        </button>
      </footer>
    </section>
  );
}
