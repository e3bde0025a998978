// Settings → Workspace → Policy: what the workspace's owners decided for every app
// (which model providers, performance history in AI context, each member's monthly
// cap, sharing AI activity), who set it and when, and the person's spending this
// month. Owners change it here; editors and viewers see it read-only (the server
// refuses them anyway). Offline, it is the policy last seen, which this app keeps to.

import { useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { Policy, ProviderRule } from "../../shared/api/generated";
import { queryKey, useMethod, useQueryCache, useWrites } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";

type ProviderKind = ProviderRule["kind"];

/** The form's fields, as typed. */
type Draft = { kind: ProviderKind; hosts: string; performanceContext: boolean; capUsd: string; shareActivity: boolean };

function draftOf(policy: Policy): Draft {
  return {
    kind: policy.providers.kind,
    hosts: policy.providers.kind === "hosts" ? policy.providers.hosts.join(", ") : "",
    performanceContext: policy.performanceContext,
    capUsd: policy.monthlyCapUsd === undefined ? "" : String(policy.monthlyCapUsd),
    shareActivity: policy.shareActivity,
  };
}

export function WorkspacePolicy() {
  const { t, toast } = useApp();
  const standing = useMethod("sync.policy", {});
  const data = standing.data ?? null;
  const cached = data?.policy ?? null;
  // A failed save goes to the app's one error banner (the data layer's default).
  const { write, pending } = useWrites();
  // The owner's edits over the policy as read; none: the policy as it is.
  const [edited, setDraft] = useState<Draft | null>(null);
  const draft = edited ?? (cached ? draftOf(cached.policy) : null);
  const cache = useQueryCache();

  const providersText = (rule: ProviderRule) =>
    rule.kind === "any" ? t("sync.policy.providersAny") : rule.kind === "local" ? t("sync.policy.providersLocal") : t("sync.policy.providersHosts", { hosts: rule.hosts.join(", ") });
  const onOff = (on: boolean) => (on ? t("sync.policy.on") : t("sync.policy.off"));

  const save = async () => {
    if (!draft) return;
    const providers: ProviderRule =
      draft.kind === "hosts" ? { kind: "hosts", hosts: draft.hosts.split(",").map((h) => h.trim()).filter((h) => h !== "") } : { kind: draft.kind };
    const cap = draft.capUsd.trim() === "" ? undefined : Number(draft.capUsd);
    const now = await write("sync.setPolicy", { providers, performanceContext: draft.performanceContext, shareActivity: draft.shareActivity, monthlyCapUsd: cap });
    if (!now) return;
    cache.setQueryData(queryKey("sync.policy", {}), now);
    setDraft(null);
    toast(t("sync.policy.saved"));
  };

  return (
    <section className="field" data-testid="sync-policy" aria-label={t("sync.policy.title")}>
      <h3 className="small">{t("sync.policy.title")}</h3>
      {standing.error && <ErrorBanner error={toClientError(standing.error)} retry={() => void standing.refetch()} />}
      {data && !cached && <p className="small muted" data-testid="sync-policy-none">{t("sync.policy.none")}</p>}
      {data && cached && (
        <>
          <p className="small muted" data-testid="sync-policy-setby">
            {cached.setBy && cached.setAt ? t("sync.policy.setBy", { name: cached.setBy, date: cached.setAt.slice(0, 10) }) : t("sync.policy.defaults")}
            {!data.fresh && <> {t("sync.policy.offline")}</>}
          </p>
          {!data.canSet && (
            <dl className="policy-list" data-testid="sync-policy-readonly">
              <dt className="small muted">{t("sync.policy.providers")}</dt>
              <dd data-testid="sync-policy-providers">{providersText(cached.policy.providers)}</dd>
              <dt className="small muted">{t("sync.policy.performanceContext")}</dt>
              <dd>{onOff(cached.policy.performanceContext)}</dd>
              <dt className="small muted">{t("sync.policy.monthlyCap")}</dt>
              <dd data-testid="sync-policy-cap">
                {cached.policy.monthlyCapUsd === undefined
                  ? t("sync.policy.noCap")
                  : t("sync.policy.capStanding", { cap: cached.policy.monthlyCapUsd.toFixed(2), spent: data.spent.costUsd.toFixed(2) })}
              </dd>
              <dt className="small muted">{t("sync.policy.shareActivity")}</dt>
              <dd>{onOff(cached.policy.shareActivity)}</dd>
            </dl>
          )}
          {data.canSet && draft && (
            <div className="policy-form" data-testid="sync-policy-form">
              <label className="field">
                <span className="small muted">{t("sync.policy.providers")}</span>
                <select data-testid="sync-policy-kind" value={draft.kind} onChange={(e) => setDraft({ ...draft, kind: e.target.value as ProviderKind })}>
                  <option value="any">{t("sync.policy.providersAny")}</option>
                  <option value="local">{t("sync.policy.providersLocal")}</option>
                  <option value="hosts">{t("sync.policy.providersList")}</option>
                </select>
              </label>
              {draft.kind === "hosts" && (
                <label className="field">
                  <span className="small muted">{t("sync.policy.hosts")}</span>
                  <input data-testid="sync-policy-hosts" value={draft.hosts} placeholder="api.example.com, llm.corp" onChange={(e) => setDraft({ ...draft, hosts: e.target.value })} />
                </label>
              )}
              <label className="check">
                <input type="checkbox" data-testid="sync-policy-performance" checked={draft.performanceContext} onChange={(e) => setDraft({ ...draft, performanceContext: e.target.checked })} />
                <span>{t("sync.policy.performanceContext")}</span>
              </label>
              <label className="field">
                <span className="small muted">{t("sync.policy.monthlyCapUsd")}</span>
                <input data-testid="sync-policy-cap-input" inputMode="decimal" value={draft.capUsd} placeholder={t("sync.policy.noCap")} onChange={(e) => setDraft({ ...draft, capUsd: e.target.value })} />
              </label>
              <p className="small muted">{t("sync.policy.spent", { spent: data.spent.costUsd.toFixed(2) })}</p>
              <label className="check">
                <input type="checkbox" data-testid="sync-policy-share" checked={draft.shareActivity} onChange={(e) => setDraft({ ...draft, shareActivity: e.target.checked })} />
                <span>{t("sync.policy.shareActivity")}</span>
              </label>
              <button type="button" className="primary" data-testid="sync-policy-save" disabled={pending} onClick={() => void save()}>
                {t("sync.policy.save")}
              </button>
            </div>
          )}
          {!data.canSet && <p className="small muted">{t("sync.policy.ownersSet")}</p>}
        </>
      )}
    </section>
  );
}
