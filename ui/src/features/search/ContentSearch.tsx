import { memo, useEffect, useState } from "react";
import type { SearchHit, Snippet } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { useMethod } from "../../shared/api/query";

/** How long typing pauses before the content search runs. */
export const SEARCH_DEBOUNCE_MS = 200;

/** The snippet's text with its highlights (UTF-16 ranges, as the engine counts) marked. */
export function SnippetText({ snippet }: { snippet: Snippet }) {
  const parts: React.ReactNode[] = [];
  let at = 0;
  snippet.highlights.forEach((h, i) => {
    if (h.from < at || h.to > snippet.text.length || h.from > h.to) return;
    parts.push(snippet.text.slice(at, h.from));
    parts.push(<mark key={i}>{snippet.text.slice(h.from, h.to)}</mark>);
    at = h.to;
  });
  parts.push(snippet.text.slice(at));
  return <>{parts}</>;
}

/** Most older versions named under a hit; more are counted as "…". */
const ALSO_IN_SHOWN = 5;

function place(t: ReturnType<typeof useApp>["t"], hit: SearchHit): string {
  if (hit.kind === "comment") return t("search.inComment");
  const where = hit.kind === "version" && hit.version != null ? t("search.inVersion", { n: hit.version }) : t("search.inText");
  const also = hit.alsoIn;
  if (also.length === 0) return where;
  const shown = also.slice(0, ALSO_IN_SHOWN).map((n) => `v${n}`);
  if (also.length > ALSO_IN_SHOWN) shown.push("…");
  return `${where} · ${t("search.alsoIn", { versions: shown.join(", ") })}`;
}

/**
 * Searches the content of every project (working copies, versions, comments) as the
 * person types, and lists the hits with their snippets; choosing one opens the project
 * at the match.
 */
export const ContentSearch = memo(function ContentSearch({ query, onOpen }: { query: string; onOpen: (hit: SearchHit) => void }) {
  const { t } = useApp();
  const q = query.trim();
  // What was typed, once the typing paused.
  const [asked, setAsked] = useState(q);
  useEffect(() => {
    const timer = setTimeout(() => setAsked(q), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [q]);
  const search = useMethod("search.query", { q: asked, limit: 20 }, { enabled: !!q && !!asked, keepPrevious: true });
  const results = search.data ?? null;
  const failed = search.isError;

  if (!q) return null;
  return (
    <section className="content-search" aria-label={t("search.heading")} data-testid="content-search">
      <h2 className="small muted">{t("search.heading")}</h2>
      {failed && <p className="small muted">{t("search.failed")}</p>}
      {results?.notice?.code === "indexBuilding" && <p className="small muted">{t("search.building")}</p>}
      {results && results.hits.length === 0 && <p className="small muted">{t("search.none")}</p>}
      <ul className="search-hits">
        {results?.hits.map((hit) => (
          <li key={`${hit.projectId}/${hit.kind}/${hit.version ?? ""}/${hit.commentId ?? ""}`}>
            <button type="button" className="search-hit" data-testid="search-hit" onClick={() => onOpen(hit)}>
              <span className="project-title">{hit.projectTitle}</span>
              <span className="small muted">{place(t, hit)}</span>
              <span className="search-snippet small">
                <SnippetText snippet={hit.snippet} />
              </span>
            </button>
          </li>
        ))}
      </ul>
      {results && results.hits.length > 0 && !results.semantic && results.notice?.code === "semanticFailed" && (
        <p className="small muted">{t("search.lexicalOnly")}</p>
      )}
    </section>
  );
});
