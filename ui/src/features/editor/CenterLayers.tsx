// What opens over the project screen's centre: a version or a diff of two, the optimize
// dialog, the review of a proposal, and the conflict between the person's text and a newer one.
import { type ReactNode, lazy, Suspense } from "react";
import type { Accepted, Platform, Project, ProposalView } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import type { Drafting } from "../drafting";
import { loadOptimizeDialog } from "../optimize";
import { loadProposalReview } from "../review";
import type { SourceTarget } from "../drafting";
import { type ConflictCause, ConflictOverlay, DiffOverlay, VersionOverlay } from "./Overlays";
import type { Conflict } from "./saver";
import type { ProjectSession } from "./session";

// Reviewing a proposal (CodeMirror's merge view) and the optimize dialog load on first use.
const ProposalReview = lazy(() => loadProposalReview().then((m) => ({ default: m.ProposalReview })));
const OptimizeDialog = lazy(() => loadOptimizeDialog().then((m) => ({ default: m.OptimizeDialog })));

export type Overlay = { kind: "diff"; from: number; to: number | null } | { kind: "view"; n: number } | null;

export function CenterLayers({
  projectId,
  project,
  session,
  flush,
  conflict,
  cause,
  overlay,
  setOverlay,
  optimize,
  setOptimize,
  review,
  drafting,
  revisionNow,
  textNow,
  onAccepted,
  onRegenerate,
  closeReview,
  onSetUpModel,
  onDraftsChanged,
  focusEditor,
  onRestoreAsk,
  onOpenSource,
  onOpenMemory,
}: {
  projectId: string;
  project: Project;
  session: ProjectSession;
  /** Saves what is pending (stable: the overlays load after it). */
  flush: () => Promise<void>;
  conflict: Conflict | null;
  cause: ConflictCause;
  overlay: Overlay;
  setOverlay: (o: Overlay) => void;
  optimize: { draft: Platform | null } | null;
  setOptimize: (o: { draft: Platform | null } | null) => void;
  review: string | null;
  drafting: Drafting;
  revisionNow: () => number;
  textNow: () => string;
  onAccepted: (accepted: Accepted) => void;
  onRegenerate: (view: ProposalView) => void;
  closeReview: () => void;
  onSetUpModel?: () => void;
  onDraftsChanged: () => void;
  focusEditor: () => void;
  onRestoreAsk: (n: number) => void;
  onOpenSource?: (target: SourceTarget) => void;
  onOpenMemory?: () => void;
}) {
  const { t } = useApp();
  const suspended = (node: ReactNode, label: MessageId) => <Suspense fallback={<p className="overlay muted pad">{t(label)}</p>}>{node}</Suspense>;
  return (
    <>
    {overlay?.kind === "diff" && (
      <DiffOverlay projectId={projectId} from={overlay.from} to={overlay.to} beforeLoad={flush} onChange={(from, to) => setOverlay({ kind: "diff", from, to })} onClose={() => setOverlay(null)} />
    )}
    {overlay?.kind === "view" && (
      <VersionOverlay
        projectId={projectId}
        number={overlay.n}
        onDiff={() => setOverlay({ kind: "diff", from: overlay.n, to: null })}
        onRestore={() => onRestoreAsk(overlay.n)}
        onClose={() => setOverlay(null)}
      />
    )}
    {optimize &&
      suspended(
        <OptimizeDialog
          projectId={projectId}
          platforms={project.platforms}
          draft={optimize.draft}
          flush={flush}
          onSetUpModel={onSetUpModel}
          onDraftsSaved={onDraftsChanged}
          onApplied={(result) => {
            onDraftsChanged();
            if (result.results.some((r) => r.version != null)) void session.reload((p) => t("version.saved", { n: p.head }));
          }}
          onClose={() => {
            setOptimize(null);
            focusEditor();
          }}
        />,
        "ai.loading",
      )}
    {review &&
      suspended(
        <ProposalReview
          key={review}
          proposalId={review}
          store={drafting.getSnapshot().active}
          flush={flush}
          revision={revisionNow}
          currentText={textNow}
          onAccepted={onAccepted}
          onRegenerate={onRegenerate}
          onClose={closeReview}
          onOpenSource={onOpenSource}
          onOpenMemory={onOpenMemory}
        />,
        "ai.loading",
      )}
    {conflict && (
      <ConflictOverlay
        conflict={conflict}
        cause={cause}
        onKeepBoth={() => void session.keepBoth()}
        onKeepMine={cause.kind === "elsewhere" ? () => void session.keepMine() : undefined}
        onTakeTheirs={() => session.takeTheirs()}
      />
    )}
    </>
  );
}
