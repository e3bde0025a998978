// The panel's header: which session (switch, new, rename, archive) and Stop while
// anything runs. One row: Stop takes the place of rename and archive (which wait while a
// turn runs), so nothing below moves when it appears. Archived sessions can be listed
// and read; Restore (in the list, or in place of archive while one is open) brings one
// back so it can be continued.
import { type ReactNode, useEffect, useRef, useState, useSyncExternalStore } from "react";
import type { Session } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { formatFullTime, formatTime } from "../../shared/i18n";
import type { Drafting } from "./store";

export function SessionBar({ drafting, running, onStop, lead }: { drafting: Drafting; running: boolean; onStop: () => void; /** Shown first in the row (the panel's Sessions | Ask switch). */ lead?: ReactNode }) {
  const { t, mod } = useApp();
  const snap = useSyncExternalStore(drafting.subscribe, drafting.getSnapshot);
  const [listOpen, setListOpen] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const [archiving, setArchiving] = useState(false);
  const active = snap.active ? (snap.sessions ?? []).find((s) => s.id === snap.active?.id) ?? snap.active.getSnapshot().session : null;
  const archived = active?.archived === true;

  return (
    <div className="session-bar" data-testid="session-bar">
      <div className="session-bar-row">
        {lead}
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
        {active && !renaming && !running && !archived && (
          <button type="button" className="icon-btn" data-testid="session-rename" aria-label={t("ai.session.rename")} title={t("ai.session.rename")} onClick={() => setRenaming(true)}>
            ✎
          </button>
        )}
        {active && !running && archived && (
          <button type="button" className="small-btn" data-testid="session-unarchive" title={t("ai.session.unarchiveHelp")} onClick={() => void drafting.unarchive(active.id)}>
            {t("ai.session.unarchive")}
          </button>
        )}
        {active && !running && !archived && (
          <button type="button" className="icon-btn" data-testid="session-archive" aria-label={t("ai.session.archive")} title={t("ai.session.archive")} onClick={() => setArchiving(true)}>
            ⤓
          </button>
        )}
        <button type="button" className="icon-btn" data-testid="session-new" aria-label={t("ai.session.new")} title={t("ai.session.new")} onClick={() => void drafting.create()}>
          +
        </button>
      </div>
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
  // Archived sessions, once asked for (read-only: they open without a composer).
  const [showArchived, setShowArchived] = useState(false);
  const all = useMethod("session.list", { projectId: drafting.projectId, includeArchived: true }, { enabled: showArchived });
  const archived = showArchived ? (all.data?.sessions.filter((s) => s.archived) ?? (all.isError ? [] : null)) : null;
  const toggleArchived = () => setShowArchived(!showArchived);
  useEffect(() => {
    ref.current?.querySelector<HTMLButtonElement>("button[aria-current=true], button")?.focus();
    const onDown = (e: MouseEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node) && !(e.target as HTMLElement).closest?.("[data-testid=session-pick]")) onClose();
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, [onClose]);
  const sessions = snap.sessions ?? [];
  const open = (s: Session) => {
    drafting.open(s);
    onClose();
  };
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
          <SessionItem key={s.id} session={s} current={s.id === activeId} onOpen={open}>
            <span className="small muted" title={formatFullTime(lang, info?.lastActivity ?? s.updatedAt)}>
              {formatTime(lang, info?.lastActivity ?? s.updatedAt, now())}
            </span>
            {waiting && (
              <span className="badge badge-warn" data-testid="session-waiting">
                {t("ai.session.waiting")}
              </span>
            )}
            {info?.status === "running" && <span className="badge">{t("ai.session.running")}</span>}
          </SessionItem>
        );
      })}
      <button type="button" role="menuitemcheckbox" aria-checked={showArchived} className="session-item session-archived-toggle small" data-testid="session-show-archived" onClick={toggleArchived}>
        {showArchived ? t("ai.session.hideArchived") : t("ai.session.showArchived")}
      </button>
      {showArchived && archived?.length === 0 && <p className="small muted pad">{t("ai.session.noArchived")}</p>}
      {showArchived &&
        archived?.map((s) => (
          <div key={s.id} className="session-item-row" data-testid="session-archived-row">
            <SessionItem session={s} current={s.id === activeId} onOpen={open} archived>
              <span className="badge">{t("ai.session.archivedBadge")}</span>
            </SessionItem>
            <button
              type="button"
              role="menuitem"
              className="small-btn session-restore"
              data-testid="session-restore"
              title={t("ai.session.unarchiveHelp")}
              onClick={async () => {
                if (await drafting.unarchive(s.id)) onClose();
              }}
            >
              {t("ai.session.unarchive")}
            </button>
          </div>
        ))}
      <p className="small muted pad">{t("ai.session.hint", { key: hint })}</p>
    </div>
  );
}

/** A session in the list: its title and when it began (sessions with the same title,
 * older ones named after the project, differ by that), then what `children` add. */
function SessionItem({ session, current, archived = false, onOpen, children }: { session: Session; current: boolean; archived?: boolean; onOpen: (s: Session) => void; children: ReactNode }) {
  const { t, lang, now } = useApp();
  return (
    <button
      type="button"
      role="menuitem"
      className={archived ? "session-item session-item-archived" : "session-item"}
      data-testid={archived ? "session-item-archived" : "session-item"}
      data-session={session.id}
      aria-current={current}
      onClick={() => onOpen(session)}
    >
      <span className="session-item-text">
        <span className="session-item-title">{session.title}</span>
        <span className="small muted session-item-started" title={formatFullTime(lang, session.createdAt)}>
          {t("ai.session.started", { time: formatTime(lang, session.createdAt, now()) })}
        </span>
      </span>
      {children}
    </button>
  );
}
