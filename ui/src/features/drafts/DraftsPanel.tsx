// Platform drafts: one sub-tab per target platform with a faithful preview, the findings
// (each jumping to its place in the source), suggested tags and copy to clipboard.
// Recompiles (debounced) whenever the saved working copy's revision changes.
import { memo, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { type ClientError, toClientError } from "../../shared/api/client";
import type { CompiledDraft, Draft, Finding, PipelineCompileResult, Platform, PlatformDraft, PlatformDraftListResult } from "../../shared/api/generated";
import { queryKey, readFresh, useMethod, useQueryCache } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { type MessageId, profileName } from "../../shared/i18n";
import { asDraft } from "./draftContent";
import { SavedDraftBar } from "./SavedDraft";
import { copyDraft } from "./draftText";
import { DraftPreview } from "./DraftPreview";
import { FindingItem } from "./FindingItem";


export const ALL_PLATFORMS: Platform[] = ["wechat", "zhihu", "x", "douyin", "xiaohongshu"];
/** Delay after the last change before compiling again. */
export const COMPILE_DEBOUNCE_MS = 400;
/** A compile slower than this shows progress. */
const SLOW_MS = 150;

export interface DraftsPanelProps {
  projectId: string;
  /** The saved working-copy revision; a change recompiles. */
  revision: number;
  /** The project's target platforms; all five when empty. */
  platforms: Platform[];
  /** Selects a source range in the editor and scrolls to it. */
  onJump: (from: number, to: number, matched?: string | null) => void;
  /** "Optimize this draft": one-click optimize of this platform's saved draft. */
  onOptimize?: (platform: Platform) => void;
}


const severityRank = { block: 0, warn: 1, info: 2 } as const;

export const DraftsPanel = memo(function DraftsPanel({ projectId, revision, platforms, onJump, onOptimize }: DraftsPanelProps) {
  const { client, lang, t, toast } = useApp();
  const targets = platforms.length > 0 ? ALL_PLATFORMS.filter((p) => platforms.includes(p)) : ALL_PLATFORMS;
  const [active, setActive] = useState<Platform>(targets[0] ?? "wechat");
  const [result, setResult] = useState<PipelineCompileResult | null>(null);
  const [error, setError] = useState<ClientError | null>(null);
  const [slow, setSlow] = useState(false);
  const seq = useRef(0);
  const findingsRef = useRef<HTMLDivElement>(null);
  const targetsKey = targets.join(",");
  // Saved drafts per platform (null: none saved yet; absent: not loaded).
  const [showSaved, setShowSaved] = useState(false);
  // Each saved draft's own findings (what its text breaks as it stands).

  // Another project, or another set of platforms, starts from its own state (adjusted
  // while rendering, so nothing of the previous one shows for a frame).
  const [shownProject, setShownProject] = useState(projectId);
  if (shownProject !== projectId) {
    setShownProject(projectId);
    setShowSaved(false);
    setResult(null);
  }
  const [shownTargets, setShownTargets] = useState(targetsKey);
  if (shownTargets !== targetsKey) {
    setShownTargets(targetsKey);
    if (!targets.includes(active)) setActive(targets[0] ?? "wechat");
  }

  // The saved drafts and their own findings: a cached read, read again after each write
  // to a draft (methods.ts); a draft just changed shows at once (put in the cache).
  const draftsKey = queryKey("platformDraft.list", { projectId });
  const drafts = useMethod("platformDraft.list", { projectId });
  const cache = useQueryCache();
  const { saved, savedFindings } = useMemo(() => {
    const r = drafts.data;
    const map: Partial<Record<Platform, PlatformDraft | null>> = {};
    if (r) for (const p of ALL_PLATFORMS) map[p] = r.drafts.find((d) => d.platform === p) ?? null;
    const findings: Partial<Record<Platform, Finding[]>> = r ? Object.fromEntries(r.findings.map((f) => [f.platform, f.findings])) : {};
    return { saved: map, savedFindings: findings };
  }, [drafts.data]);
  // A failed read shows in the panel's one banner, until a compile answers after it.
  const [compiledAt, setCompiledAt] = useState(0);
  const listError = drafts.error && drafts.errorUpdatedAt > compiledAt ? toClientError(drafts.error) : null;

  const compile = useCallback(async () => {
    const n = ++seq.current;
    const slowTimer = setTimeout(() => n === seq.current && setSlow(true), SLOW_MS);
    try {
      const r = await readFresh(client, "pipeline.compile", { projectId });
      if (n !== seq.current) return;
      setResult(r);
      setError(null);
      setCompiledAt(Date.now());
    } catch (e) {
      if (n === seq.current) setError(toClientError(e));
    } finally {
      clearTimeout(slowTimer);
      if (n === seq.current) setSlow(false);
    }
  }, [client, projectId]);

  // First compile at once; later ones debounced after the last change.
  const first = useRef(true);
  useEffect(() => {
    first.current = true;
  }, [projectId]);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      void compile();
      return;
    }
    const timer = setTimeout(() => void compile(), COMPILE_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [compile, revision, targetsKey]);

  const compiled: CompiledDraft | undefined = result?.drafts.find((d) => d.draft.platform === active);
  const savedDraft = saved[active];
  const shownSaved = showSaved && savedDraft ? savedDraft : null;
  const shown: Draft | undefined = shownSaved ? asDraft(shownSaved) : compiled?.draft;
  // A saved draft edited by hand, or compiled from an earlier text, is not the compile
  // shown otherwise: its findings are its own text's, not the source's and the compile's.
  const ownText = shownSaved !== null && (shownSaved.handEdited || (result !== null && shownSaved.sourceRevision !== result.revision));
  const findings = useMemo(() => {
    const all = ownText
      ? [...(savedFindings[active] ?? [])]
      : [...(result?.findings ?? []).filter((f) => f.platform === null || f.platform === active), ...(compiled?.findings ?? [])];
    return all.sort((a, b) => severityRank[a.severity] - severityRank[b.severity]);
  }, [result, compiled, active, ownText, savedFindings]);

  const copy = async () => {
    if (!shown) return;
    try {
      await copyDraft(shown);
      toast(t("drafts.copied"));
    } catch {
      toast(t("drafts.copyFailed"));
    }
  };

  const label = (p: Platform) => t(`platform.${p}` as MessageId);

  return (
    <section className="panel-body drafts" data-testid="drafts-panel" data-revision={result?.revision ?? ""}>
      <div
        className="subtabs"
        role="tablist"
        aria-label={t("drafts.platforms")}
        onKeyDown={(e) => {
          if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
          e.preventDefault();
          const i = targets.indexOf(active);
          const next = targets[(i + (e.key === "ArrowRight" ? 1 : targets.length - 1)) % targets.length];
          if (!next) return;
          setActive(next);
          e.currentTarget.querySelector<HTMLButtonElement>(`[data-testid=draft-tab-${next}]`)?.focus();
        }}
      >
        {targets.map((p) => {
          // A must-fix finding of the source (a banned word, a strict-industry term)
          // concerns every platform, as its draft's own ones concern it.
          const blocks = [...(result?.findings ?? []).filter((f) => f.platform === null || f.platform === p), ...(result?.drafts.find((d) => d.draft.platform === p)?.findings ?? [])].some(
            (f) => f.severity === "block",
          );
          return (
            <button
              key={p}
              type="button"
              role="tab"
              aria-selected={p === active}
              tabIndex={p === active ? 0 : -1}
              data-testid={`draft-tab-${p}`}
              onClick={() => setActive(p)}
            >
              {label(p)}
              {blocks && <span className="dot dot-block" aria-label={t("drafts.severity.block")} />}
            </button>
          );
        })}
      </div>
      {(error ?? listError) && <ErrorBanner error={(error ?? listError)!} retry={() => void compile()} />}
      {(slow || (!result && !error && !listError)) && (
        <p className="busy pad small" role="status" data-testid="drafts-compiling">
          <span className="spinner" aria-hidden="true" /> {t("drafts.compiling", { n: targets.length })}
        </p>
      )}
      {compiled && (
        <>
          <div className="draft-bar">
            <span className="small muted draft-profile" data-testid="draft-profile" title={compiled.draft.profileId}>
              {profileName(lang, compiled.draft.profileId)}
            </span>
            <span className="spacer" />
            {findings.length > 0 && (
              <button
                type="button"
                className="link small"
                data-testid="findings-summary"
                onClick={() => findingsRef.current?.scrollIntoView({ block: "start", behavior: "smooth" })}
              >
                {(["block", "warn", "info"] as const)
                  .map((sev) => [sev, findings.filter((f) => f.severity === sev).length] as const)
                  .filter(([, n]) => n > 0)
                  .map(([sev, n]) => (
                    <span key={sev} className={`sev sev-${sev}`}>
                      {t(`drafts.summary.${sev}` as MessageId, { n })}
                    </span>
                  ))}
              </button>
            )}
            <button type="button" data-testid="draft-copy" onClick={() => void copy()}>
              {t("drafts.copy")}
            </button>
            {onOptimize && savedDraft && (
              <button type="button" data-testid="draft-optimize" onClick={() => onOptimize(active)}>
                {t("optimize.thisDraft")}
              </button>
            )}
          </div>
          {savedDraft !== undefined && (
            <SavedDraftBar
              projectId={projectId}
              sourceRevision={result?.revision ?? revision}
              saved={savedDraft}
              platform={active}
              showSaved={showSaved}
              onShowSaved={setShowSaved}
              onChange={(d) =>
                cache.setQueryData<PlatformDraftListResult>(draftsKey, (r) => r && { ...r, drafts: [...r.drafts.filter((x) => x.platform !== d.platform), d] })
              }
            />
          )}
          {shown && <DraftPreview draft={shown} projectId={projectId} />}
        </>
      )}
      {result && (
        <>
          {result.tags.length > 0 && shown?.content.type !== "card" && (
            <div className="draft-section">
              <h3 className="small muted">{t("drafts.tags")}</h3>
              <ul className="chips" data-testid="draft-tags">
                {result.tags.map((tag) => (
                  <li key={tag} className="chip">
                    #{tag}
                  </li>
                ))}
              </ul>
            </div>
          )}
          <div className="draft-section" ref={findingsRef}>
            <h3 className="small muted" data-testid="findings-title" data-own={ownText ? "saved" : "compile"}>
              {t(ownText ? "drafts.savedFindings" : "drafts.findings", { n: findings.length })}
            </h3>
            {findings.length === 0 ? (
              <p className="small muted" data-testid="findings-none">
                {t("drafts.noFindings")}
              </p>
            ) : (
              <ul className="findings" data-testid="findings">
                {findings.map((f, i) => (
                  <FindingItem key={`${f.check}-${i}-${f.span?.from ?? ""}`} f={f} onJump={onJump} />
                ))}
              </ul>
            )}
          </div>
        </>
      )}
    </section>
  );
});
