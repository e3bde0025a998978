// Settings → AI models: the LLM profiles, their health, keys (write-only), presets,
// the model picker and "test connection" with its result in place.

import { useEffect, useRef, useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { Hint, LlmProfile, LlmProfileListResult, LocalServer } from "../../shared/api/generated";
import { queryKey, useCalls, useMethod, useQueryCache, useWrites } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { describeHint } from "../../shared/i18n";
import { presetLabel } from "./llm";
import type { FormStart } from "./profileForm";
import { ProfileForm } from "./ProfileForm";
import { ProfileRow, type TestState } from "./ProfileRow";

export function Models() {
  const { t, lang } = useApp();
  // The profiles, the presets and (first run) the servers found running here are cached
  // reads; a profile write makes them stale (methods.ts), so nothing here reloads by hand.
  const listRead = useMethod("llmProfile.list", {});
  const list = listRead.data ?? null;
  const loadError = listRead.error ? toClientError(listRead.error) : null;
  const load = () => void listRead.refetch();
  const presets = useMethod("llmProfile.presets", {}).data?.presets ?? [];
  const cache = useQueryCache();
  const setList = (f: (l: LlmProfileListResult | null) => LlmProfileListResult | null) =>
    cache.setQueryData<LlmProfileListResult>(queryKey("llmProfile.list", {}), (l) => f(l ?? null) ?? undefined);
  // "Test connection" keeps its outcome in the row (a failure is the test's result);
  // setting the default and deleting fail to the app's one error banner.
  const { call } = useCalls();
  const { write } = useWrites();
  const [form, setForm] = useState<FormStart | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [tests, setTests] = useState<Record<string, TestState>>({});
  const [notice, setNotice] = useState<Hint[]>([]);
  // Where keyboard focus goes when the form or a deleted row goes away.
  const newButton = useRef<HTMLButtonElement>(null);
  const [refocus, setRefocus] = useState(false);
  useEffect(() => {
    if (refocus && !form) {
      newButton.current?.focus();
      setRefocus(false);
    }
  }, [refocus, form, list]);

  // First run: offer a model server already running on this computer.
  const noProfiles = list !== null && list.profiles.length === 0;
  const detect = useMethod("llmProfile.detectLocal", {}, { enabled: noProfiles });
  const local: LocalServer[] | "detecting" | null = !noProfiles ? null : detect.isPending ? "detecting" : (detect.data?.found ?? []);

  const replace = (profile: LlmProfile) =>
    setList((l) => (l ? { ...l, profiles: l.profiles.map((p) => (p.id === profile.id ? profile : p)) } : l));

  const test = async (profile: LlmProfile) => {
    setTests((s) => ({ ...s, [profile.id]: { state: "running" } }));
    try {
      const result = await call("llmProfile.test", { profile: profile.id });
      replace(result.profile);
      setTests((s) => ({ ...s, [profile.id]: { state: "done", result } }));
    } catch (e) {
      setTests((s) => ({ ...s, [profile.id]: { state: "error", error: toClientError(e) } }));
    }
  };

  if (form) {
    return (
      <ProfileForm
        start={form}
        presets={presets}
        envKeyActive={list?.envKeyActive ?? false}
        keyGone={"profile" in form && (list?.missingKeys ?? []).includes(form.profile.id)}
        onCancel={() => {
          setForm(null);
          setRefocus(true);
        }}
        onSaved={(profile, warnings) => {
          setForm(null);
          setRefocus(true);
          setNotice(warnings);
          // Show the saved profile at once; the reload below brings the default flag and order.
          setList((l) =>
            l
              ? {
                  ...l,
                  profiles: l.profiles.some((p) => p.id === profile.id)
                    ? l.profiles.map((p) => (p.id === profile.id ? profile : p))
                    : [...l.profiles, profile],
                  // A key just saved is in the keychain; the reload below checks again.
                  missingKeys: (l.missingKeys ?? []).filter((id) => id !== profile.id),
                }
              : l,
          );
          // A changed endpoint or key makes the last test stale.
          setTests((s) => {
            const { [profile.id]: _gone, ...rest } = s;
            return rest;
          });
          void load();
        }}
      />
    );
  }

  return (
    <div className="form" data-testid="models">
      <p className="small muted">{t("models.help")}</p>
      {list?.envKeyActive && (
        <p className="small notice" data-testid="env-key-active">
          {t("models.envKeyActive")}
        </p>
      )}
      {notice.map((h) => (
        <p key={h.id} className="small warning" role="status">
          {describeHint(lang, h)}
        </p>
      ))}
      {loadError && <ErrorBanner error={loadError} retry={() => void load()} />}
      {list === null && !loadError && (
        <p className="progress small muted" role="status">
          <span className="spinner" aria-hidden="true" /> {t("models.loading")}
        </p>
      )}
      {noProfiles && (
        <div className="models-empty" data-testid="models-empty">
          <p>{t("models.empty")}</p>
          {local === "detecting" && (
            <p className="progress small muted" role="status">
              <span className="spinner" aria-hidden="true" /> {t("models.detecting")}
            </p>
          )}
          {Array.isArray(local) &&
            local.map((server) => (
              <div key={server.preset.id} className="row between detected" data-testid="detected-local">
                <span>
                  {t("models.detected", { name: presetLabel(lang, server.preset), url: server.preset.baseUrl })}{" "}
                  <span className="small muted">{t("models.detectedModels", { n: server.models.length })}</span>
                </span>
                <button type="button" className="primary" onClick={() => setForm({ preset: server.preset, models: server.models })}>
                  {t("models.useDetected")}
                </button>
              </div>
            ))}
        </div>
      )}
      {list && list.profiles.length > 0 && (
        <ul className="plain-list profile-list" data-testid="profile-list">
          {list.profiles.map((p) => (
            <ProfileRow
              key={p.id}
              profile={p}
              test={tests[p.id]}
              keyGone={(list.missingKeys ?? []).includes(p.id)}
              envKeyActive={list.envKeyActive}
              deleting={deleting === p.id}
              onTest={() => void test(p)}
              onEdit={() => setForm({ profile: p })}
              onSetKey={() => setForm({ profile: p, setKey: true })}
              // Each write makes the list stale (methods.ts): it is read again.
              onDefault={() => void write("llmProfile.setDefault", { profile: p.id })}
              onAskDelete={() => setDeleting(p.id)}
              onCancelDelete={() => setDeleting(null)}
              onDelete={() => {
                setDeleting(null);
                setRefocus(true);
                void write("llmProfile.delete", { profile: p.id });
              }}
            />
          ))}
        </ul>
      )}
      <div>
        <button ref={newButton} type="button" data-testid="profile-new" onClick={() => setForm({ preset: null })} disabled={list === null}>
          + {t("models.new")}
        </button>
      </div>
    </div>
  );
}
