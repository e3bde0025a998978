// Ask, a mode of the AI panel: a question answered from the person's own writing
// (`search.ask`), with the engine's citations [N] opening their source at the span, a
// citation that failed the engine's check marked, the footer the engine counted, the
// route shown and overridable, and a cached answer that can be asked again fresh.
import { memo, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { type ClientError, toClientError } from "../../shared/api/client";
import type { Answer, AskRoute, Source } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { askLibrary, cancelAsk } from "./data";
import { useApp } from "../../shared/context";
import { answerHtml, type SourceTarget, targetOf } from "./citations";


/** The route the person picked before asking: `auto` lets the engine decide. */
type RouteChoice = "auto" | AskRoute;

const AnswerBody = memo(function AnswerBody({ answer, onOpen }: { answer: Answer; onOpen: (target: SourceTarget) => void }) {
  const { t } = useApp();
  const html = useMemo(
    () =>
      answerHtml(answer, {
        open: (n, title) => t("ask.cite.open", { n, title }),
        failed: (n) => t("ask.cite.failed", { n }),
      }),
    [answer, t],
  );
  const onClick = (e: React.MouseEvent) => {
    const button = (e.target as HTMLElement).closest("button[data-cite]");
    if (!button) return;
    const n = Number(button.getAttribute("data-cite"));
    const citation = answer.citations.find((c) => c.n === n);
    if (citation) onOpen(targetOf(citation, citation.span));
  };
  // The citations inside are real buttons: Tab reaches them and Enter clicks them, and
  // their clicks bubble here.
  return <div className="md ask-answer-text" data-testid="ask-answer-text" onClick={onClick} dangerouslySetInnerHTML={{ __html: html }} />;
});

function placeOf(t: ReturnType<typeof useApp>["t"], source: Source): string {
  if (source.kind === "version" && source.version != null) return t("search.inVersion", { n: source.version });
  if (source.kind === "comment") return t("search.inComment");
  return t("search.inText");
}

export function AskView({ projectId, onOpenSource }: { projectId: string; onOpenSource: (target: SourceTarget) => void }) {
  const { client, t } = useApp();
  const [question, setQuestion] = useState("");
  const [routeChoice, setRouteChoice] = useState<RouteChoice>("auto");
  const [projectOnly, setProjectOnly] = useState(false);
  const [busy, setBusy] = useState(false);
  // A failed question keeps its error beside the question, with a retry (no write).
  const [error, setError] = useState<ClientError | null>(null);
  const [answer, setAnswer] = useState<Answer | null>(null);
  /** The question the answer on screen is for (the field may have changed since). */
  const [asked, setAsked] = useState<{ q: string; projectOnly: boolean } | null>(null);
  const request = useRef(0);
  /** The running question's request id, which `search.askCancel` stops. */
  const running = useRef<string | null>(null);
  const [stopped, setStopped] = useState(false);

  const run = async (q: string, options: { route?: AskRoute; fresh?: boolean; projectOnly: boolean }) => {
    const text = q.trim();
    if (!text) return;
    const mine = ++request.current;
    const requestId = `ask_${Date.now().toString(36)}_${mine}`;
    running.current = requestId;
    setBusy(true);
    setStopped(false);
    setError(null);
    try {
      const result = await askLibrary(client, {
        q: text,
        requestId,
        ...(options.projectOnly ? { projectId } : {}),
        ...(options.route ? { route: options.route } : {}),
        ...(options.fresh ? { fresh: true } : {}),
      });
      if (mine !== request.current) return;
      setAnswer(result);
      setAsked({ q: text, projectOnly: options.projectOnly });
    } catch (e) {
      if (mine === request.current) setError(toClientError(e));
    } finally {
      if (mine === request.current) setBusy(false);
      if (running.current === requestId) running.current = null;
    }
  };

  /** Stops the running question: the engine ends its model call; the question stays. */
  const stop = useCallback(() => {
    const requestId = running.current;
    if (!requestId) return;
    running.current = null;
    request.current++;
    setBusy(false);
    setStopped(true);
    cancelAsk(client, requestId).catch(() => undefined);
  }, [client]);

  // Esc stops a running question (before anything else Esc would close).
  useEffect(() => {
    if (!busy) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.isComposing || e.defaultPrevented) return;
      e.preventDefault();
      stop();
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [busy, stop]);

  const submit = () => void run(question, { route: routeChoice === "auto" ? undefined : routeChoice, projectOnly });
  const other: AskRoute | null = answer ? (answer.route === "material" ? "general" : "material") : null;
  const unfound = answer?.quotes.filter((q) => !q.found) ?? [];
  const cited = new Set(answer?.citations.map((c) => c.n) ?? []);

  return (
    <div className="ask" data-testid="ask">
      <form
        className="ask-form"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <label className="sr-only" htmlFor="ask-question">
          {t("ask.question")}
        </label>
        <textarea
          id="ask-question"
          data-testid="ask-question"
          rows={2}
          placeholder={t("ask.placeholder")}
          value={question}
          onChange={(e) => setQuestion(e.target.value)}
          onKeyDown={(e) => {
            // Enter asks; Shift+Enter is a new line; never in the middle of an IME composition.
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing && e.keyCode !== 229) {
              e.preventDefault();
              submit();
            }
          }}
        />
        <div className="row ask-options">
          <label className="small">
            {t("ask.route")}{" "}
            <select data-testid="ask-route-choice" value={routeChoice} onChange={(e) => setRouteChoice(e.target.value as RouteChoice)}>
              <option value="auto">{t("ask.route.auto")}</option>
              <option value="material">{t("ask.route.material")}</option>
              <option value="general">{t("ask.route.general")}</option>
            </select>
          </label>
          <label className="check small">
            <input type="checkbox" data-testid="ask-project-only" checked={projectOnly} onChange={(e) => setProjectOnly(e.target.checked)} />
            {t("ask.projectOnly")}
          </label>
          <button type="submit" className="primary" data-testid="ask-submit" disabled={busy || !question.trim()}>
            {t("ask.submit")}
          </button>
        </div>
      </form>
      {busy && (
        <p className="small muted pad-x" role="status" data-testid="ask-busy">
          <span className="spinner" aria-hidden="true" /> {t("ask.busy")}{" "}
          <button type="button" className="danger-btn" data-testid="ask-stop" title="Esc" onClick={stop}>
            ■ {t("ai.stop")} <kbd>Esc</kbd>
          </button>
        </p>
      )}
      {stopped && !busy && (
        <p className="small muted pad-x" role="status" data-testid="ask-stopped">
          {t("ask.stopped")}
        </p>
      )}
      {error && (
        <div className="pad-x">
          <ErrorBanner error={error} retry={submit} onDismiss={() => setError(null)} />
        </div>
      )}
      {!answer && !busy && !error && !stopped && (
        <div className="empty small" data-testid="ask-empty">
          <p className="empty-title">{t("ask.empty.title")}</p>
          <p className="muted">{t("ask.empty.body")}</p>
        </div>
      )}
      {answer && asked && (
        <section className="ask-result" data-testid="ask-result" aria-live="polite" aria-busy={busy}>
          <div className="row ask-meta">
            <span className={`badge route-${answer.route}`} data-testid="ask-route" data-route={answer.route}>
              {answer.route === "material" ? t("ask.routed.material") : t("ask.routed.general")}
              {!answer.routeChosen && ` · ${t("ask.routed.auto")}`}
            </span>
            {other && (
              <button type="button" className="small-btn" data-testid="ask-reroute" disabled={busy} onClick={() => void run(asked.q, { route: other, projectOnly: asked.projectOnly })}>
                {other === "general" ? t("ask.reroute.general") : t("ask.reroute.material")}
              </button>
            )}
            {answer.cached && (
              <>
                <span className="badge" data-testid="ask-cached">
                  {t("ask.cached")}
                </span>
                <button
                  type="button"
                  className="small-btn"
                  data-testid="ask-fresh"
                  disabled={busy}
                  onClick={() => void run(asked.q, { route: answer.routeChosen ? answer.route : undefined, fresh: true, projectOnly: asked.projectOnly })}
                >
                  {t("ask.fresh")}
                </button>
              </>
            )}
          </div>
          {answer.notice?.code === "semanticFailed" && <p className="small muted">{t("search.lexicalOnly")}</p>}
          {answer.answer ? (
            <AnswerBody answer={answer} onOpen={onOpenSource} />
          ) : (
            <p className="muted" data-testid="ask-nothing">
              {t("ask.nothing")}
            </p>
          )}
          {(answer.unknownCitations.length > 0 || unfound.length > 0) && (
            <div className="warning small" role="note" data-testid="ask-check-failed">
              {answer.unknownCitations.length > 0 && <p>{t("ask.unknownCitations", { list: answer.unknownCitations.map((n) => `[${n}]`).join(" ") })}</p>}
              {unfound.map((q) => (
                <p key={q.text}>{t("ask.quoteNotFound", { quote: q.text })}</p>
              ))}
            </div>
          )}
          {answer.sources.length > 0 && (
            <ol className="ask-sources small" aria-label={t("ask.sources")} data-testid="ask-sources">
              {answer.sources.map((s) => (
                <li key={s.n} value={s.n} data-cited={cited.has(s.n)}>
                  <button type="button" className="link-btn" data-testid="ask-source" onClick={() => onOpenSource(targetOf(s, s.span))}>
                    {s.projectTitle}
                  </button>{" "}
                  <span className="muted">
                    {placeOf(t, s)}
                    {cited.has(s.n) ? ` · ${t("ask.cited")}` : ""}
                  </span>
                </li>
              ))}
            </ol>
          )}
          {/* The engine's counts in the person's language (its `footer` says them in both). */}
          <p className="small muted ask-footer" data-testid="ask-footer">
            {t("ask.footer", { retrieved: answer.retrieved, cited: answer.cited })}
          </p>
        </section>
      )}
    </div>
  );
}
