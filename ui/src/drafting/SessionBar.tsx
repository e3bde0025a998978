// The panel's header: which session (switch, new, rename, archive) and Stop while
// anything runs.
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import type { Session } from "../api/generated";
import { useApp } from "../context";
import { formatFullTime, formatTime } from "../i18n";
import type { Drafting } from "./store";

export function SessionBar({ drafting, running, onStop }: { drafting: Drafting; running: boolean; onStop: () => void }) {
  const { t, mod } = useApp();
  const snap = useSyncExternalStore(drafting.subscribe, drafting.getSnapshot);
  const [listOpen, setListOpen] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const [archiving, setArchiving] = useState(false);
  const active = snap.active ? (snap.sessions ?? []).find((s) => s.id === snap.active?.id) ?? snap.active.getSnapshot().session : null;

  return (
    <div className="session-bar" data-testid="session-bar">
      {renaming && active ? (
        <RenameForm
          session={active}
          onDone={async (title) => {
            if (title !== null && title !== active.title) await drafting.rename(active.id, title);
            setRenaming(false);
          }}
        />
      ) : (
        <button
          type="button"
          className="session-pick"
          data-testid="session-pick"
          aria-expanded={listOpen}
          aria-haspopup="true"
          onClick={() => {
            setListOpen((o) => !o);
            void drafting.describeSessions();
          }}
        >
          <span className="session-title" data-testid="session-title">
            {active?.title ?? t("ai.session.none")}
          </span>
          <span aria-hidden="true">▾</span>
        </button>
      )}
      <span className="spacer" />
      {running && (
        <button type="button" className="danger-btn" data-testid="stop" title="Esc" onClick={onStop}>
          ■ {t("ai.stop")} <kbd>Esc</kbd>
        </button>
      )}
      {active && !renaming && (
        <button type="button" className="icon-btn" data-testid="session-rename" aria-label={t("ai.session.rename")} title={t("ai.session.rename")} onClick={() => setRenaming(true)}>
          ✎
        </button>
      )}
      {active && (
        <button
          type="button"
          className="icon-btn"
          data-testid="session-archive"
          aria-label={t("ai.session.archive")}
          title={t("ai.session.archive")}
          disabled={running}
          onClick={() => setArchiving(true)}
        >
          ⌫
        </button>
      )}
      <button type="button" data-testid="session-new" title={t("ai.session.new")} onClick={() => void drafting.create()}>
        + {t("ai.session.newShort")}
      </button>
      {archiving && active && (
        <div className="confirm-row" role="alertdialog" aria-label={t("ai.session.archiveAsk")} data-testid="archive-confirm">
          <span className="small">{t("ai.session.archiveAsk")}</span>
          <button
            type="button"
            className="primary"
            autoFocus
            data-testid="archive-yes"
            onClick={async () => {
              setArchiving(false);
              await drafting.archive(active.id);
            }}
          >
            {t("ai.session.archive")}
          </button>
          <button type="button" onClick={() => setArchiving(false)}>
            {t("common.cancel")}
          </button>
        </div>
      )}
      {listOpen && (
        <SessionList
          drafting={drafting}
          activeId={active?.id ?? null}
          onClose={() => setListOpen(false)}
          hint={`${mod}+J`}
        />
      )}
    </div>
  );
}

function RenameForm({ session, onDone }: { session: Session; onDone: (title: string | null) => void }) {
  const { t } = useApp();
  const [title, setTitle] = useState(session.title);
  return (
    <form
      className="rename-form"
      onSubmit={(e) => {
        e.preventDefault();
        onDone(title.trim() || null);
      }}
    >
      <input
        data-testid="session-rename-input"
        aria-label={t("ai.session.rename")}
        value={title}
        autoFocus
        maxLength={200}
        onChange={(e) => setTitle(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            onDone(null);
          }
        }}
      />
      <button type="submit" className="primary">
        {t("common.save")}
      </button>
    </form>
  );
}

function SessionList({ drafting, activeId, onClose, hint }: { drafting: Drafting; activeId: string | null; onClose: () => void; hint: string }) {
  const { t, lang, now } = useApp();
  const snap = useSyncExternalStore(drafting.subscribe, drafting.getSnapshot);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.querySelector<HTMLButtonElement>("button[aria-current=true], button")?.focus();
    const onDown = (e: MouseEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node) && !(e.target as HTMLElement).closest?.("[data-testid=session-pick]")) onClose();
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, [onClose]);
  const sessions = snap.sessions ?? [];
  return (
    <div
      ref={ref}
      className="session-list"
      data-testid="session-list"
      role="menu"
      aria-label={t("ai.session.list")}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.stopPropagation();
          onClose();
        }
      }}
    >
      {sessions.length === 0 && <p className="small muted pad">{t("ai.session.noneYet")}</p>}
      {sessions.map((s) => {
        const info = snap.info[s.id];
        const waiting = info?.status === "waitingForApproval" || info?.status === "waitingForAnswer";
        return (
          <button
            key={s.id}
            type="button"
            role="menuitem"
            className="session-item"
            data-testid="session-item"
            data-session={s.id}
            aria-current={s.id === activeId}
            onClick={() => {
              drafting.open(s);
              onClose();
            }}
          >
            <span className="session-item-title">{s.title}</span>
            <span className="small muted" title={formatFullTime(lang, info?.lastActivity ?? s.updatedAt)}>
              {formatTime(lang, info?.lastActivity ?? s.updatedAt, now())}
            </span>
            {waiting && (
              <span className="badge badge-warn" data-testid="session-waiting">
                {t("ai.session.waiting")}
              </span>
            )}
            {info?.status === "running" && <span className="badge">{t("ai.session.running")}</span>}
          </button>
        );
      })}
      <p className="small muted pad">{t("ai.session.hint", { key: hint })}</p>
    </div>
  );
}
