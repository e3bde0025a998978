// The AI's part of the status bar (UX.md: "saved · v12 · words · model · context
// meter"): the model the open session uses (else the default profile's), and how full
// its context window was at the last call.
import { useEffect, useSyncExternalStore } from "react";
import type { LlmProfile } from "../api/generated";
import { useApp } from "../context";
import type { Drafting, SessionStore } from "./store";

export function StatusAi({ drafting }: { drafting: Drafting }) {
  const snap = useSyncExternalStore(drafting.subscribe, drafting.getSnapshot);
  useEffect(() => {
    if (snap.profiles === null) void drafting.reloadProfiles();
  }, [drafting, snap.profiles]);
  if (snap.active) return <SessionStatus store={snap.active} profiles={snap.profiles ?? []} />;
  const fallback = snap.profiles?.find((p) => p.isDefault) ?? null;
  return fallback ? <Model profile={fallback} /> : null;
}

function SessionStatus({ store, profiles }: { store: SessionStore; profiles: LlmProfile[] }) {
  const { t } = useApp();
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const profile = profiles.find((p) => p.id === snap.session.profileId) ?? null;
  const context = snap.timeline.context;
  const window = profile?.contextWindow ?? 0;
  const pct = context && window > 0 ? Math.min(100, Math.round((context.estimatedTokens / window) * 100)) : null;
  return (
    <>
      {profile && <Model profile={profile} />}
      {pct !== null && (
        <>
          <span aria-hidden="true">·</span>
          <span data-testid="status-context" data-pct={pct} className={pct >= 80 ? "status-high" : undefined} title={t("ai.context.label", { pct })}>
            {t("status.context", { pct })}
          </span>
        </>
      )}
    </>
  );
}

function Model({ profile }: { profile: LlmProfile }) {
  const { t } = useApp();
  return (
    <>
      <span aria-hidden="true">·</span>
      <span data-testid="status-model" title={t("status.modelOf", { profile: profile.name })}>
        {profile.model}
      </span>
    </>
  );
}
