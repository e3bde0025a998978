// The saved draft of one platform: its revision, status and origin, saving a compile,
// editing by hand, and choosing between hand edits and a fresh compile (never an
// overwrite without the person's choice). A `publishing` draft is read-only.
import { useState } from "react";
import { useCalls } from "../../shared/api/query";
import type { DraftStatus, PlatformDraft, PlatformDraftSaveResult } from "../../shared/api/generated";
import { Dialog } from "../../shared/ui/Dialog";
import { useApp } from "../../shared/context";
import { type MessageId, profileName } from "../../shared/i18n";
import { DiffView } from "../../shared/ui/DiffView";
import type { PublicationDetails } from "../../shared/api/generated";
import { PublishDialog } from "../performance";
import { DraftEditor } from "./DraftEditor";

export const STATUSES: DraftStatus[] = ["draft", "ready", "publishing", "published"];
export interface SavedDraftProps {
  projectId: string;
  /** The project's working-copy revision now. */
  sourceRevision: number;
  saved: PlatformDraft | null;
  platform: PlatformDraft["platform"];
  /** Whether the preview shows the saved draft (else the live compile). */
  showSaved: boolean;
  onShowSaved: (v: boolean) => void;
  /** A change to the saved draft (saved, edited, status); its findings are read again. */
  onChange: (d: PlatformDraft) => void;
}

export function SavedDraftBar({ projectId, sourceRevision, saved, platform, showSaved, onShowSaved, onChange }: SavedDraftProps) {
  const { lang, t, toast, showError } = useApp();
  const { call } = useCalls();
  const [busy, setBusy] = useState(false);
  const [choice, setChoice] = useState<PlatformDraftSaveResult | null>(null);
  const [editing, setEditing] = useState(false);

  // Another draft starts without the last one's open editor.
  const draftOf = `${projectId} ${platform}`;
  const [shownDraftOf, setShownDraftOf] = useState(draftOf);
  if (shownDraftOf !== draftOf) {
    setShownDraftOf(draftOf);
    setEditing(false);
  }

  // A failed save or status change goes to the app's one error banner.
  const run = async (f: () => Promise<void>) => {
    setBusy(true);
    try {
      await f();
    } catch (e) {
      showError(e);
    } finally {
      setBusy(false);
    }
  };

  const save = (replaceRevision?: number) =>
    run(async () => {
      const r = await call("platformDraft.save", { projectId, platform, ...(replaceRevision !== undefined ? { replaceRevision } : {}) });
      if (r.outcome === "needsChoice") {
        setChoice(r);
        return;
      }
      setChoice(null);
      onChange(r.draft);
      onShowSaved(true);
      toast(t(`savedDraft.outcome.${r.outcome}` as MessageId, { n: r.draft.revision }));
    });

  // Setting a draft to published asks for the publication's details first; the status
  // and the publication are one write (`publication` of platformDraft.setStatus).
  const [publishing, setPublishing] = useState(false);
  const setStatus = (status: DraftStatus) => {
    if (!saved) return;
    if (status === "published" && saved.status !== "published") {
      setPublishing(true);
      return;
    }
    void run(async () => {
      const d = await call("platformDraft.setStatus", { projectId, platform, status, baseRevision: saved.revision });
      onChange(d);
    });
  };
  const publish = async (details: PublicationDetails | null) => {
    if (!saved) return;
    setBusy(true);
    try {
      const d = await call("platformDraft.setStatus", {
        projectId,
        platform,
        status: "published",
        baseRevision: saved.revision,
        ...(details ? { publication: details } : {}),
      });
      onChange(d);
      setPublishing(false);
      if (details) toast(t("savedDraft.publicationRecorded"));
    } catch (e) {
      // To the app's one error banner (above the dialog); the dialog stays open with
      // what was typed.
      showError(e);
    } finally {
      setBusy(false);
    }
  };

  const readOnly = saved?.status === "publishing";
  const stale = saved !== null && saved.sourceRevision < sourceRevision;

  return (
    <div className="saved-draft" data-testid="saved-draft" data-revision={saved?.revision ?? ""} data-status={saved?.status ?? ""}>
      {saved === null ? (
        <div className="saved-row">
          <span className="small muted">{t("savedDraft.none")}</span>
          <span className="spacer" />
          <button type="button" data-testid="draft-save" disabled={busy} onClick={() => void save()}>
            {t("savedDraft.save")}
          </button>
        </div>
      ) : (
        <>
          <div className="saved-row">
            <div className="segmented" role="group" aria-label={t("savedDraft.show")}>
              <button type="button" aria-pressed={!showSaved} data-testid="draft-view-live" onClick={() => onShowSaved(false)}>
                {t("savedDraft.live")}
              </button>
              <button type="button" aria-pressed={showSaved} data-testid="draft-view-saved" onClick={() => onShowSaved(true)}>
                {t("savedDraft.saved", { n: saved.revision })}
              </button>
            </div>
            <span className="spacer" />
            <label className="small">
              <span className="sr-only">{t("savedDraft.status")}</span>
              <select
                data-testid="draft-status"
                value={saved.status}
                disabled={busy}
                onChange={(e) => setStatus(e.target.value as DraftStatus)}
              >
                {STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {t(`savedDraft.status.${s}` as MessageId)}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <div className="saved-row small muted">
            <span data-testid="draft-origin" title={saved.profileId}>
              {saved.sourceVersion > 0
                ? t("savedDraft.origin", { v: saved.sourceVersion, p: profileName(lang, saved.profileId) })
                : t("savedDraft.originWorking", { p: profileName(lang, saved.profileId) })}
            </span>
            {saved.handEdited && <span className="badge" data-testid="draft-hand-edited">{t("savedDraft.handEdited")}</span>}
            {stale && (
              <span className="badge badge-stale" data-testid="draft-stale">
                {t("savedDraft.stale")}
              </span>
            )}
            {readOnly && (
              <span className="badge" data-testid="draft-read-only">
                {t("savedDraft.readOnly")}
              </span>
            )}
            <span className="spacer" />
            <button type="button" className="link" data-testid="draft-recompile" disabled={busy || readOnly} onClick={() => void save()}>
              {t("savedDraft.recompile")}
            </button>
            <button
              type="button"
              className="link"
              data-testid="draft-edit"
              disabled={busy || readOnly}
              onClick={() => {
                onShowSaved(true);
                setEditing(true);
              }}
            >
              {t("savedDraft.edit")}
            </button>
          </div>
        </>
      )}
      {editing && saved && !readOnly && (
        <DraftEditor
          key={`${saved.platform}-${saved.revision}`}
          saved={saved}
          onCancel={() => setEditing(false)}
          onSaved={(d) => {
            onChange(d);
            setEditing(false);
          }}
        />
      )}
      {publishing && saved && (
        <PublishDialog
          platform={saved.platform}
          defaultVersion={saved.sourceVersion}
          defaultTitle={saved.title}
          busy={busy}
          onConfirm={(details) => void publish(details)}
          onCancel={() => setPublishing(false)}
        />
      )}
      {choice && saved && (
        <Dialog title={t("savedDraft.choiceTitle")} onClose={() => setChoice(null)} testId="draft-choice" wide>
          <p className="small">{t("savedDraft.choiceBody")}</p>
          {choice.diff && <DiffView diff={choice.diff} mode="split" identicalLabel={t("savedDraft.identical")} />}
          <div className="draft-actions">
            <button type="button" data-testid="draft-keep-edits" data-autofocus onClick={() => setChoice(null)}>
              {t("savedDraft.keep")}
            </button>
            <button type="button" className="danger" data-testid="draft-use-compile" disabled={busy} onClick={() => void save(choice.draft.revision)}>
              {t("savedDraft.useCompile")}
            </button>
          </div>
        </Dialog>
      )}
    </div>
  );
}
