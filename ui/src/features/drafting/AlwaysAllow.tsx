// "Always allow" in a permission prompt: the exact rule it would store (tool, scope,
// argument pattern) and the past calls of the workspace it would have matched, read
// from the engine for the scope the person picks, so they see how wide it is before
// choosing. Only shown when the engine offers a rule (tools that always ask carry none).
import { useState } from "react";
import type { AllowOffer, AllowScope } from "../../shared/api/generated";
import { toClientError } from "../../shared/api/client";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { formatFullTime } from "../../shared/i18n";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { toolLabel } from "./stepText";

type T = ReturnType<typeof useApp>["t"];

export const ALLOW_SCOPES: readonly AllowScope[] = ["session", "project", "workspace"];

/** A rule's scope in words. */
export function scopeLabel(t: T, scope: AllowScope): string {
  switch (scope) {
    case "session":
      return t("ai.always.scope.session");
    case "project":
      return t("ai.always.scope.project");
    case "workspace":
      return t("ai.always.scope.workspace");
  }
}

/** A rule's argument pattern in words: `field = glob`, or any input. */
export function patternLabel(t: T, pattern: Record<string, string>): string {
  const fields = Object.entries(pattern);
  if (fields.length === 0) return t("ai.always.anyInput");
  return fields.map(([field, glob]) => `${field} = ${glob}`).join(", ");
}

export function AlwaysAllow({
  sessionId,
  requestId,
  offer,
  busy,
  onAllowAlways,
}: {
  sessionId: string;
  requestId: string;
  offer: AllowOffer;
  busy: boolean;
  onAllowAlways: (scope: AllowScope) => void;
}) {
  const { t, lang } = useApp();
  // The narrowest scope first: the person widens it knowingly.
  const [scope, setScope] = useState<AllowScope>("session");
  const preview = useMethod("allowRule.preview", { sessionId, requestId, scope }, { keepPrevious: true });
  const data = preview.data ?? null;
  const error = preview.error ? toClientError(preview.error) : null;
  return (
    <fieldset className="prompt-always" data-testid="always-allow">
      <legend className="small">{t("ai.always.title")}</legend>
      <div className="row wrap" role="radiogroup" aria-label={t("ai.always.scope")}>
        {ALLOW_SCOPES.map((s) => (
          <label key={s} className="small">
            <input type="radio" name={`always-scope-${requestId}`} value={s} checked={scope === s} data-testid={`always-scope-${s}`} onChange={() => setScope(s)} />{" "}
            {scopeLabel(t, s)}
          </label>
        ))}
      </div>
      <p className="small" data-testid="always-rule">
        {t("ai.always.rule", { tool: toolLabel(t, lang, offer.tool), scope: scopeLabel(t, scope), pattern: patternLabel(t, offer.pattern) })}
      </p>
      {error && <ErrorBanner error={error} />}
      {data ? (
        <>
          <p className="small muted" data-testid="always-total" data-total={data.total}>
            {t("ai.always.matches", { n: data.total })}
          </p>
          {data.matches.length > 0 && (
            <ul className="small muted prompt-matches" data-testid="always-matches" aria-label={t("ai.always.matchesList")}>
              {data.matches.map((m, i) => (
                <li key={`${m.ownerId}-${m.at}-${i}`} data-testid="always-match">
                  {formatFullTime(lang, m.at)} · {m.projectTitle ?? m.projectId}
                  {Object.keys(m.fields).length > 0 && ` · ${patternLabel(t, m.fields)}`}
                </li>
              ))}
            </ul>
          )}
          {data.total > data.matches.length && (
            <p className="small muted" data-testid="always-more">
              {t("ai.always.more", { n: data.total - data.matches.length })}
            </p>
          )}
        </>
      ) : (
        !error && <p className="small muted">{t("ai.loading")}</p>
      )}
      <button type="button" disabled={busy || !data} data-testid="allow-always" onClick={() => onAllowAlways(scope)}>
        {t("ai.always.allow", { scope: scopeLabel(t, scope) })}
      </button>
    </fieldset>
  );
}
