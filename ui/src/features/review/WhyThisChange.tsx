// "Why this change?": what the model had read before it proposed a change (search
// hits, memory, tool results, pins, the selection, links, performance summaries), from
// `proposal.why`. A
// disclosure button opens the list; each source opens where it came from: a search
// hit or the selection opens the document at its span, a memory item opens Memory, a
// tool result shows what the model was sent, a link opens in the browser.
import { useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { ProvenanceSource, WhySource } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import type { SourceTarget } from "../drafting";

export interface WhyThisChangeProps {
  proposalId: string;
  /** Only the sources this hunk came with. */
  hunkId?: string;
  /** Opens a document (the project at a span, a version, a comment). */
  onOpenSource?: (target: SourceTarget) => void;
  /** Opens Settings → Memory. */
  onOpenMemory?: () => void;
  /** Shows the sources at once (History opens it from a version's row). */
  initiallyOpen?: boolean;
}

function sourceText(source: ProvenanceSource): string {
  switch (source.type) {
    case "searchHit":
      return `${source.title} — ${source.snippet}`;
    case "memory":
    case "pin":
    case "selection":
      return source.text;
    case "link":
      return source.url;
    case "toolResult":
      return source.tool;
    case "performanceSummary":
      return `${source.platform} · ${source.snapshotIds.join(", ")}`;
  }
}

export function WhyThisChange({ proposalId, hunkId, onOpenSource, onOpenMemory, initiallyOpen = false }: WhyThisChangeProps) {
  const { t } = useApp();
  const [open, setOpen] = useState(initiallyOpen);
  const [shown, setShown] = useState<number | null>(null);
  // Read once the list is first opened; a proposal's sources do not change, so the
  // cached answer stands when it opens again.
  const why = useMethod("proposal.why", hunkId ? { proposalId, hunkId } : { proposalId }, { enabled: open, refetchOnMount: false });
  const result = why.data ?? null;
  const [dismissed, setDismissed] = useState<unknown>(null);
  const error = why.error && why.error !== dismissed ? toClientError(why.error) : null;

  const openButton = (entry: WhySource, index: number) => {
    const source = entry.source;
    const label = t("review.why.open");
    switch (source.type) {
      case "searchHit":
        return onOpenSource ? (
          <button type="button" data-testid="why-open" onClick={() => onOpenSource({ projectId: source.projectId, span: source.span ?? null, version: source.version ?? null, commentId: source.commentId ?? null })}>
            {label}
          </button>
        ) : null;
      case "memory":
        return onOpenMemory ? (
          <button type="button" data-testid="why-open" onClick={onOpenMemory}>
            {label}
          </button>
        ) : null;
      case "toolResult":
        return (
          <button type="button" data-testid="why-open" aria-expanded={shown === index} onClick={() => setShown((s) => (s === index ? null : index))}>
            {shown === index ? t("review.why.hide") : t("review.why.show")}
          </button>
        );
      case "link":
        return (
          <a href={source.url} target="_blank" rel="noreferrer noopener" data-testid="why-open">
            {label}
          </a>
        );
      case "pin":
      case "selection":
      case "performanceSummary":
        return null;
    }
  };

  return (
    <div className="why small" data-testid="why-this-change">
      <button type="button" aria-expanded={open} aria-controls={`why-${proposalId}`} data-testid="why-toggle" onClick={() => setOpen((o) => !o)}>
        {t("review.why.title")}
      </button>
      {open && (
        <div id={`why-${proposalId}`} role="region" aria-label={t("review.why.title")}>
          {error && <ErrorBanner error={error} onDismiss={() => setDismissed(why.error)} />}
          {!result && !error && <p className="muted">{t("ai.loading")}</p>}
          {result && result.sources.length === 0 && <p className="muted" data-testid="why-none">{t("review.why.none")}</p>}
          {result && result.sources.length > 0 && (
            <ul data-testid="why-sources">
              {result.sources.map((entry, index) => (
                <li key={index} data-testid="why-source" data-kind={entry.source.type}>
                  <span className="badge">{t(`review.why.kind.${entry.source.type}` as MessageId)}</span> <span>{sourceText(entry.source)}</span> {openButton(entry, index)}
                  {shown === index && entry.source.type === "toolResult" && (
                    <pre className="why-content" data-testid="why-content">
                      {entry.content ?? t("review.why.gone")}
                    </pre>
                  )}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
