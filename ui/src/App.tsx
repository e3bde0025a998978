import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { KeyboardEvent as ReactKeyboardEvent } from "react";
import { type ApiClient, type ClientError, toClientError } from "./api/client";
import type { Project } from "./api/generated";

/** What the list shows; both `project.list` summaries and a created Project fit. */
type ListItem = Pick<Project, "id" | "title" | "head" | "updatedAt">;

function toItem(p: ListItem): ListItem {
  return { id: p.id, title: p.title, head: p.head, updatedAt: p.updatedAt };
}
import { describeError, formatFullTime, formatTime, type Lang, type MessageId, modKeyLabel, translate } from "./i18n";

export interface AppProps {
  client: ApiClient;
  lang: Lang;
  /** For "3 minutes ago"; tests pin it. */
  now?: () => number;
  platform?: string;
}

interface ShownError {
  error: ClientError;
  retry?: () => void;
}

function byRecent(a: ListItem, b: ListItem): number {
  const ta = Date.parse(a.updatedAt);
  const tb = Date.parse(b.updatedAt);
  if (ta !== tb) return (Number.isNaN(tb) ? 0 : tb) - (Number.isNaN(ta) ? 0 : ta);
  return a.title.localeCompare(b.title);
}

export function App({ client, lang, now = Date.now, platform }: AppProps) {
  const t = useCallback((id: MessageId, vars?: Record<string, string | number>) => translate(lang, id, vars), [lang]);
  const mod = modKeyLabel(platform ?? (typeof navigator !== "undefined" ? navigator.platform : ""));

  const [projects, setProjects] = useState<ListItem[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [title, setTitle] = useState("");
  const [creating, setCreating] = useState(false);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState("");
  const inputRef = useRef<HTMLInputElement>(null);
  const creatingRef = useRef(false);

  const load = useCallback(async () => {
    try {
      const res = await client.call("project.list", {});
      setProjects(res.projects.map(toItem).sort(byRecent));
      setError(null);
    } catch (e) {
      setProjects((p) => p ?? []);
      setError({ error: toClientError(e), retry: () => void load() });
    }
  }, [client]);

  useEffect(() => {
    void load();
  }, [load]);

  const create = useCallback(async () => {
    const clean = title.trim();
    if (!clean || creatingRef.current) {
      inputRef.current?.focus();
      return;
    }
    creatingRef.current = true;
    setCreating(true);
    try {
      const project = await client.call("project.create", { title: clean });
      setProjects((list) => [toItem(project), ...(list ?? []).filter((p) => p.id !== project.id)].sort(byRecent));
      setSelectedId(project.id);
      setTitle("");
      setError(null);
      setAnnouncement(t("project.created", { title: project.title }));
    } catch (e) {
      setError({ error: toClientError(e) });
    } finally {
      creatingRef.current = false;
      setCreating(false);
      inputRef.current?.focus();
    }
  }, [client, title, t]);

  // Ctrl/Cmd+N focuses the new-project title, wherever focus is.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.isComposing || e.keyCode === 229) return;
      if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === "n") {
        e.preventDefault();
        inputRef.current?.focus();
        inputRef.current?.select();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const onTitleKeyDown = (e: ReactKeyboardEvent<HTMLInputElement>) => {
    if (e.key !== "Enter") return;
    // An Enter that confirms an input-method composition must not create anything.
    if (e.nativeEvent.isComposing || e.keyCode === 229) return;
    e.preventDefault();
    void create();
  };

  const selected = useMemo(() => projects?.find((p) => p.id === selectedId) ?? null, [projects, selectedId]);
  const nowMs = now();
  const headLabel = (p: ListItem) => (p.head > 0 ? t("project.head", { n: p.head }) : t("project.head.none"));

  return (
    <div className="app">
      <aside className="sidebar" aria-label={t("projects.heading")}>
        <header className="sidebar-header">
          <h1>{t("projects.heading")}</h1>
          {projects && projects.length > 0 && (
            <span className="muted small">
              {projects.length === 1 ? t("projects.count.one") : t("projects.count", { n: projects.length })}
            </span>
          )}
        </header>

        <div className="new-project" role="group" aria-labelledby="new-project-label">
          <label id="new-project-label" htmlFor="new-project-title" className="small muted">
            {t("new.label")} <kbd>{t("new.shortcut", { mod })}</kbd>
          </label>
          <div className="row">
            <input
              id="new-project-title"
              ref={inputRef}
              data-testid="new-project-title"
              type="text"
              autoComplete="off"
              spellCheck={false}
              placeholder={t("new.placeholder")}
              value={title}
              onChange={(e) => setTitle(e.target.value)}
              onKeyDown={onTitleKeyDown}
            />
            <button
              type="button"
              data-testid="create-project"
              className="primary"
              disabled={creating || title.trim() === ""}
              onClick={() => void create()}
            >
              {creating ? t("new.creating") : t("new.create")}
            </button>
          </div>
        </div>

        {error && <ErrorBanner lang={lang} shown={error} onDismiss={() => setError(null)} t={t} />}

        {projects === null ? (
          <p className="muted small pad">{t("projects.loading")}</p>
        ) : (
          <>
            <ul className="project-list" data-testid="project-list">
              {projects.map((p) => (
                <li key={p.id} data-testid="project-item">
                  <button
                    type="button"
                    className="project"
                    aria-current={p.id === selectedId ? "true" : undefined}
                    onClick={() => setSelectedId(p.id)}
                  >
                    <span className="project-title">{p.title}</span>
                    <span className="project-meta small muted">
                      <time dateTime={p.updatedAt} title={formatFullTime(lang, p.updatedAt)}>
                        {formatTime(lang, p.updatedAt, nowMs)}
                      </time>
                      <span aria-hidden="true"> · </span>
                      <span>{headLabel(p)}</span>
                    </span>
                  </button>
                </li>
              ))}
            </ul>
            {projects.length === 0 && (
              <div className="empty" data-testid="empty-state">
                <p className="empty-title">{t("empty.title")}</p>
                <p className="muted">{t("empty.body")}</p>
                <p className="muted small">{t("empty.shortcut", { mod })}</p>
              </div>
            )}
          </>
        )}
      </aside>

      <main className="main">
        {selected ? (
          <article className="selected">
            <h2 className="doc-title">{selected.title}</h2>
            <p className="muted small">
              {t("project.updated", { time: formatFullTime(lang, selected.updatedAt) })} · {headLabel(selected)}
            </p>
          </article>
        ) : (
          <section className="welcome">
            <h2>{t("welcome.title")}</h2>
            <p className="muted">{t("welcome.body")}</p>
            <dl className="keys small">
              <dt>
                <kbd>{mod}</kbd>+<kbd>N</kbd>
              </dt>
              <dd>{t("welcome.key.new")}</dd>
            </dl>
          </section>
        )}
      </main>

      <div className="sr-only" aria-live="polite">
        {announcement}
      </div>
    </div>
  );
}

function ErrorBanner({
  lang,
  shown,
  onDismiss,
  t,
}: {
  lang: Lang;
  shown: ShownError;
  onDismiss: () => void;
  t: (id: MessageId) => string;
}) {
  const { title, details } = describeError(lang, shown.error);
  return (
    <div className="error-banner" role="alert" data-testid="error-banner" data-code={shown.error.code}>
      <p className="error-title">{title}</p>
      {details.map((d) => (
        <p key={d} className="small">
          {d}
        </p>
      ))}
      <div className="error-actions">
        {shown.retry && (
          <button type="button" onClick={shown.retry}>
            {t("error.retry")}
          </button>
        )}
        <button type="button" onClick={onDismiss}>
          {t("error.dismiss")}
        </button>
      </div>
    </div>
  );
}
