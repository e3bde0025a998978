// The saved draft of one platform: its revision, status and origin, saving a compile,
// editing by hand, and choosing between hand edits and a fresh compile (never an
// overwrite without the person's choice). A `publishing` draft is read-only.
import { useEffect, useRef, useState } from "react";
import { type ClientError, toClientError } from "../../shared/api/client";
import { useCalls } from "../../shared/api/query";
import type { Draft, DraftContent, DraftStatus, PlatformDraft, PlatformDraftSaveResult } from "../../shared/api/generated";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { type MessageId, profileName } from "../../shared/i18n";
import { DiffView } from "../../shared/ui/DiffView";
import type { PublicationDetails } from "../../shared/api/generated";
import { PublishDialog } from "../performance";

export const STATUSES: DraftStatus[] = ["draft", "ready", "publishing", "published"];
const POST_SEPARATOR = "\n---\n";

/** A saved draft in the shape the previews take. */
export function asDraft(d: PlatformDraft): Draft {
  return { platform: d.platform, profileId: d.profileId, title: d.title, content: d.content, nImages: 0, nLinks: 0 };
}

/** The part of a draft a person edits as text. */
export function editableText(c: DraftContent): string {
  switch (c.type) {
    case "html":
      return c.html;
    case "markdown":
      return c.markdown;
    case "thread":
      return c.posts.map((p) => p.text).join(POST_SEPARATOR);
    case "card":
      return c.body;
  }
}

/** The content with its text (and, for cards, tags) replaced by the edit. */
export function editedContent(c: DraftContent, text: string, tags: string): DraftContent {
  switch (c.type) {
    case "html":
      return { ...c, html: text };
    case "markdown":
      return { ...c, markdown: text };
    case "thread":
      return {
        type: "thread",
        posts: text
          .split(/\n-{3,}\n/)
          .map((p) => p.trim())
          .filter((p) => p.length > 0)
          .map((p) => ({ text: p, weightedLength: 0 })),
      };
    case "card":
      return {
        type: "card",
        body: text,
        tags: tags
          .split(/[,，\s]+/)
          .map((x) => x.replace(/^#/, "").trim())
          .filter((x) => x.length > 0),
      };
  }
}

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
  const { lang, t, toast } = useApp();
  const { call } = useCalls();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ClientError | null>(null);
  const [choice, setChoice] = useState<PlatformDraftSaveResult | null>(null);
  const [editing, setEditing] = useState(false);

  // Another draft starts without the last one's error or open editor.
  const draftOf = `${projectId} ${platform}`;
  const [shownDraftOf, setShownDraftOf] = useState(draftOf);
  if (shownDraftOf !== draftOf) {
    setShownDraftOf(draftOf);
    setError(null);
    setEditing(false);
  }

  const run = async (f: () => Promise<void>) => {
    setBusy(true);
    try {
      await f();
      setError(null);
    } catch (e) {
      setError(toClientError(e));
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
  const [publishError, setPublishError] = useState<ClientError | null>(null);
  const setStatus = (status: DraftStatus) => {
    if (!saved) return;
    if (status === "published" && saved.status !== "published") {
      setPublishError(null);
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
      setPublishError(toClientError(e));
    } finally {
      setBusy(false);
    }
  };

  const readOnly = saved?.status === "publishing";
  const stale = saved !== null && saved.sourceRevision < sourceRevision;

  return (
    <div className="saved-draft" data-testid="saved-draft" data-revision={saved?.revision ?? ""} data-status={saved?.status ?? ""}>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
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
          error={publishError}
          onDismissError={() => setPublishError(null)}
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

function DraftEditor({ saved, onCancel, onSaved }: { saved: PlatformDraft; onCancel: () => void; onSaved: (d: PlatformDraft) => void }) {
  const { t } = useApp();
  const { call } = useCalls();
  const [title, setTitle] = useState(saved.title);
  const [text, setText] = useState(() => editableText(saved.content));
  const [tags, setTags] = useState(() => (saved.content.type === "card" ? saved.content.tags.join(", ") : ""));
  const [error, setError] = useState<ClientError | null>(null);
  const [busy, setBusy] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  useEffect(() => area.current?.focus(), []);

  const submit = async () => {
    setBusy(true);
    try {
      const r = await call("platformDraft.edit", {
        projectId: saved.projectId,
        platform: saved.platform,
        baseRevision: saved.revision,
        title,
        content: editedContent(saved.content, text, tags),
      });
      onSaved(r.draft);
    } catch (e) {
      setError(toClientError(e));
    } finally {
      setBusy(false);
    }
  };

  const hint = t(`savedDraft.editHint.${saved.content.type}` as MessageId);
  return (
    <form
      className="draft-editor"
      data-testid="draft-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      onKeyDown={(e) => {
        if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          void submit();
        } else if (e.key === "Escape" && !e.nativeEvent.isComposing) {
          e.preventDefault();
          onCancel();
        }
      }}
    >
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <label className="small">
        {t("savedDraft.title")}
        <input data-testid="draft-edit-title" value={title} onChange={(e) => setTitle(e.target.value)} />
      </label>
      <label className="small">
        {hint}
        <textarea ref={area} data-testid="draft-edit-text" rows={12} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
      </label>
      {saved.content.type === "card" && (
        <label className="small">
          {t("savedDraft.tags")}
          <input data-testid="draft-edit-tags" value={tags} onChange={(e) => setTags(e.target.value)} />
        </label>
      )}
      <div className="draft-actions">
        <span className="small muted">{t("savedDraft.editKeys")}</span>
        <span className="spacer" />
        <button type="button" onClick={onCancel}>
          {t("savedDraft.cancel")}
        </button>
        <button type="submit" className="primary" data-testid="draft-edit-save" disabled={busy}>
          {t("savedDraft.saveEdit")}
        </button>
      </div>
    </form>
  );
}
