import { memo, useState } from "react";
import type { Comment } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { formatFullTime, formatTime } from "../../shared/i18n";

export interface CommentsPanelProps {
  comments: Comment[] | null;
  /** The text currently selected in the editor, if any. */
  selectionText: string;
  onAdd: (body: string) => Promise<boolean>;
  onResolve: (c: Comment, resolved: boolean) => unknown;
  onDelete: (c: Comment) => unknown;
  onJump: (c: Comment) => void;
  /** Open comments whose quoted text is no longer in the source. */
  lost?: ReadonlySet<string>;
}

const NONE: ReadonlySet<string> = new Set();

export const CommentsPanel = memo(function CommentsPanel({ comments, selectionText, onAdd, onResolve, onDelete, onJump, lost = NONE }: CommentsPanelProps) {
  const { t, lang, now, mod } = useApp();
  const [body, setBody] = useState("");
  const [busy, setBusy] = useState(false);
  const [showResolved, setShowResolved] = useState(false);

  const submit = async () => {
    if (!body.trim() || busy) return;
    setBusy(true);
    const ok = await onAdd(body.trim());
    setBusy(false);
    if (ok) setBody("");
  };

  const open = comments?.filter((c) => !c.resolved) ?? [];
  const resolved = comments?.filter((c) => c.resolved) ?? [];
  const nowMs = now();

  const item = (c: Comment) => (
    <li key={c.id} className={`comment ${c.resolved ? "resolved" : ""}`} data-testid="comment-item" data-resolved={c.resolved}>
      {c.quote &&
        (lost.has(c.id) ? (
          <p className="comment-quote comment-quote-gone small" data-testid="comment-quote-gone">
            <del>“{c.quote}”</del> <span className="muted">{t("comments.quoteGone")}</span>
          </p>
        ) : (
          <button type="button" className="comment-quote" onClick={() => onJump(c)} title={t("comments.jump")}>
            “{c.quote}”
          </button>
        ))}
      <p className="comment-body">{c.body}</p>
      <p className="small muted">
        {c.author} ·{" "}
        <time dateTime={c.createdAt} title={formatFullTime(lang, c.createdAt)}>
          {formatTime(lang, c.createdAt, nowMs)}
        </time>
      </p>
      <div className="version-actions">
        <button type="button" className="link" data-testid="comment-resolve" onClick={() => onResolve(c, !c.resolved)}>
          {c.resolved ? t("comments.reopen") : t("comments.resolve")}
        </button>
        <button type="button" className="link" onClick={() => onDelete(c)}>
          {t("comments.delete")}
        </button>
      </div>
    </li>
  );

  return (
    <section className="panel-body comments" data-testid="comments-panel">
      <div className="comment-form">
        <p className="small muted" data-testid="comment-target">
          {selectionText
            ? t("comments.on", { quote: selectionText.length > 40 ? `${selectionText.slice(0, 40)}…` : selectionText })
            : t("comments.noselection")}
        </p>
        <textarea
          data-testid="comment-input"
          rows={3}
          value={body}
          placeholder={t("comments.placeholder")}
          aria-label={t("comments.placeholder")}
          onChange={(e) => setBody(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !e.nativeEvent.isComposing && e.keyCode !== 229) {
              e.preventDefault();
              void submit();
            }
          }}
        />
        <div className="row end">
          <span className="small muted">
            {mod}+Enter
          </span>
          <button type="button" className="primary" data-testid="comment-add" disabled={!body.trim() || busy} onClick={() => void submit()}>
            {busy ? t("comments.adding") : t("comments.add")}
          </button>
        </div>
      </div>
      {comments === null && <p className="muted pad">{t("comments.loading")}</p>}
      {comments && comments.length === 0 && (
        <div className="empty" data-testid="comments-empty">
          <p className="empty-title">{t("comments.empty.title")}</p>
          <p className="muted">{t("comments.empty.body")}</p>
        </div>
      )}
      <ul className="comment-list" data-testid="comment-list">
        {open.map(item)}
      </ul>
      {resolved.length > 0 && (
        <>
          <button type="button" className="link pad" aria-expanded={showResolved} onClick={() => setShowResolved((s) => !s)}>
            {showResolved ? t("comments.hideResolved", { n: resolved.length }) : t("comments.showResolved", { n: resolved.length })}
          </button>
          {showResolved && <ul className="comment-list">{resolved.map(item)}</ul>}
        </>
      )}
    </section>
  );
});
