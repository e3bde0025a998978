// Editing a saved draft by hand: its title and text (and a card's topics), saved as a
// new revision marked hand-edited.
import { useEffect, useRef, useState } from "react";
import type { PlatformDraft } from "../../shared/api/generated";
import { useCalls } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { editableText, editedContent } from "./draftContent";

export function DraftEditor({ saved, onCancel, onSaved }: { saved: PlatformDraft; onCancel: () => void; onSaved: (d: PlatformDraft) => void }) {
  const { t, showError } = useApp();
  const { call } = useCalls();
  const [title, setTitle] = useState(saved.title);
  const [text, setText] = useState(() => editableText(saved.content));
  const [tags, setTags] = useState(() => (saved.content.type === "card" ? saved.content.tags.join(", ") : ""));
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
      // To the app's one error banner; the editor stays open with what was typed.
      showError(e);
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
