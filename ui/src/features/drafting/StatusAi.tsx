// The AI's part of the status bar (UX.md: "saved · v12 · words · model · context
// meter"): the model the open session uses (else the default profile's), and how full
// its context window was at the last call.
import { useEffect, useSyncExternalStore } from "react";
import type { LlmProfile } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { modelLabel } from "../settings";
import { contextFill, fillTitle } from "./ContextMeter";
import type { Drafting, SessionStore } from "./store";

export function StatusAi({ drafting }: { drafting: Drafting }) {
  const snap = useSyncExternalStore(drafting.subscribe, drafting.getSnapshot);
  useEffect(() => {
    if (snap.profiles === null) void drafting.reloadProfiles();
  }, [drafting, snap.profiles]);
  useEffect(() => drafting.followProfiles(), [drafting]);
  if (snap.active) return <SessionStatus store={snap.active} profiles={snap.profiles ?? []} />;
  const fallback = snap.profiles?.find((p) => p.isDefault) ?? null;
  return fallback ? <Model profile={fallback} /> : null;
}

function SessionStatus({ store, profiles }: { store: SessionStore; profiles: LlmProfile[] }) {
  const { t, lang } = useApp();
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const profile = profiles.find((p) => p.id === snap.session.profileId) ?? null;
  // The same figure as the panel's meter: with the engine's budget, the reply's reserve counts.
  const fill = contextFill(snap.timeline.context, profile?.contextWindow ?? null, snap.budget);
  const pct = (snap.timeline.context || fill.budget) && fill.window > 0 ? fill.pct : null;
  return (
    <>
      {profile && <Model profile={profile} />}
      {pct !== null && (
        <>
          <span aria-hidden="true">·</span>
          <span data-testid="status-context" data-pct={pct} className={pct >= 80 ? "status-high" : undefined} title={fillTitle(t, lang, fill)}>
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
      <span data-testid="status-model" className="status-shrink" title={`${profile.model}\n${t("status.modelOf", { profile: profile.name })}`}>
        {modelLabel(profile.model)}
      </span>
    </>
  );
}
