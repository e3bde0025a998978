// Settings → AI models: the LLM profiles, their health, keys (write-only), presets,
// the model picker and "test connection" with its result in place.

import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from "react";
import type { ClientError } from "../../shared/api/client";
import { toClientError } from "../../shared/api/client";
import type {
  Hint,
  LlmPreset,
  LlmProfile,
  LlmProfileListResult,
  LlmTestResult,
  LocalServer,
  SchemaForm,
  ToolLoading,
} from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { describeError, describeHint, formatFullTime, formatTime, type MessageId } from "../../shared/i18n";
import { DeleteButton } from "./DeleteButton";
import { isLocalServer, maskedFingerprint, modelLabel, presetLabel } from "./llm";
import { type FormStart, type ProfileFields, ProfileFormModel } from "./profileForm";

type TestState = { state: "running" } | { state: "done"; result: LlmTestResult } | { state: "error"; error: ClientError };


export function Models() {
  const { client, t, lang } = useApp();
  const [list, setList] = useState<LlmProfileListResult | null>(null);
  const [loadError, setLoadError] = useState<ClientError | null>(null);
  const [presets, setPresets] = useState<LlmPreset[]>([]);
  const [form, setForm] = useState<FormStart | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [tests, setTests] = useState<Record<string, TestState>>({});
  const [rowError, setRowError] = useState<{ id: string; error: ClientError } | null>(null);
  const [local, setLocal] = useState<LocalServer[] | "detecting" | null>(null);
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

  const load = useCallback(async () => {
    setLoadError(null);
    try {
      setList(await client.call("llmProfile.list", {}));
    } catch (e) {
      setLoadError(toClientError(e));
    }
  }, [client]);

  useEffect(() => {
    void load();
    client.call("llmProfile.presets", {}).then(
      (r) => setPresets(r.presets),
      () => setPresets([]),
    );
  }, [client, load]);

  // First run: offer a model server already running on this computer.
  const noProfiles = list !== null && list.profiles.length === 0;
  useEffect(() => {
    if (!noProfiles || local !== null) return;
    setLocal("detecting");
    client.call("llmProfile.detectLocal", {}).then(
      (r) => setLocal(r.found),
      () => setLocal([]),
    );
  }, [client, noProfiles, local]);

  const replace = (profile: LlmProfile) =>
    setList((l) => (l ? { ...l, profiles: l.profiles.map((p) => (p.id === profile.id ? profile : p)) } : l));

  const test = async (profile: LlmProfile) => {
    setTests((s) => ({ ...s, [profile.id]: { state: "running" } }));
    try {
      const result = await client.call("llmProfile.test", { profile: profile.id });
      replace(result.profile);
      setTests((s) => ({ ...s, [profile.id]: { state: "done", result } }));
    } catch (e) {
      setTests((s) => ({ ...s, [profile.id]: { state: "error", error: toClientError(e) } }));
    }
  };

  const act = async (profileId: string, fn: () => Promise<unknown>) => {
    setRowError(null);
    try {
      await fn();
      await load();
    } catch (e) {
      setRowError({ id: profileId, error: toClientError(e) });
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
              error={rowError?.id === p.id ? rowError.error : null}
              deleting={deleting === p.id}
              onTest={() => void test(p)}
              onEdit={() => setForm({ profile: p })}
              onSetKey={() => setForm({ profile: p, setKey: true })}
              onDefault={() => void act(p.id, () => client.call("llmProfile.setDefault", { profile: p.id }))}
              onAskDelete={() => setDeleting(p.id)}
              onCancelDelete={() => setDeleting(null)}
              onDelete={() => {
                setDeleting(null);
                setRefocus(true);
                void act(p.id, () => client.call("llmProfile.delete", { profile: p.id }));
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

function ProfileRow({
  profile: p,
  test,
  keyGone,
  envKeyActive,
  error,
  deleting,
  onTest,
  onEdit,
  onSetKey,
  onDefault,
  onAskDelete,
  onCancelDelete,
  onDelete,
}: {
  profile: LlmProfile;
  test: TestState | undefined;
  /** Its saved key is no longer in the system keychain. */
  keyGone: boolean;
  envKeyActive: boolean;
  error: ClientError | null;
  deleting: boolean;
  onTest: () => void;
  onEdit: () => void;
  onSetKey: () => void;
  onDefault: () => void;
  onAskDelete: () => void;
  onCancelDelete: () => void;
  onDelete: () => void;
}) {
  const { t, lang, now } = useApp();
  const running = test?.state === "running";
  // A call with this profile would fail before sending anything: say so, with the way out.
  const needsKey = !envKeyActive && (keyGone || (p.keyRequired && !p.keyFingerprint));
  const lastError = p.health === "failed" && p.lastError ? describeError(lang, { ...p.lastError, hints: [] }) : null;
  return (
    <li className="profile" data-testid="profile-item" data-name={p.name} data-health={p.health}>
      <div className="row between">
        <span className="profile-title">
          <strong>{p.name}</strong>
          {p.isDefault && <span className="badge badge-default">{t("models.default")}</span>}
          {p.provider === "disabled" && <span className="badge">{t("models.disabled")}</span>}
          <span
            className={`badge health health-${p.health}`}
            data-testid="health"
            title={p.lastTestedAt ? t("models.lastTested", { time: formatFullTime(lang, p.lastTestedAt) }) : undefined}
          >
            {t(`health.${p.health}` as MessageId)}
          </span>
        </span>
        <span className="profile-actions">
          <button type="button" className="small-btn" data-testid="profile-test" disabled={running} onClick={onTest}>
            {t("models.test")}
          </button>
          <button type="button" className="link" data-testid="profile-edit" onClick={onEdit}>
            {t("common.edit")}
          </button>
          {!p.isDefault && (
            <button type="button" className="link" data-testid="profile-default" onClick={onDefault}>
              {t("models.makeDefault")}
            </button>
          )}
          <DeleteButton name={p.name} asking={deleting} onAsk={onAskDelete} onCancel={onCancelDelete} onConfirm={onDelete} testId="profile-delete" />
        </span>
      </div>
      <div className="small muted profile-meta">
        <code>{p.baseUrl}</code> ·{" "}
        <span data-testid="profile-model-name" title={p.model}>
          {modelLabel(p.model)}
        </span>{" "}
        ·{" "}
        {p.keyFingerprint && keyGone && !envKeyActive ? (
          <span className="warning-text" data-testid="key-gone">
            {t("models.keyGone", { fp: maskedFingerprint(p.keyFingerprint) })}
          </span>
        ) : p.keyFingerprint ? (
          <span data-testid="key-fingerprint">{t("models.keyStored", { fp: maskedFingerprint(p.keyFingerprint) })}</span>
        ) : p.keyRequired ? (
          <span className="warning-text" data-testid="key-missing">
            {t("models.keyMissing")}
          </span>
        ) : (
          t("models.noKeyNeeded")
        )}
        {needsKey && (
          <>
            {" "}
            <button type="button" className="link" data-testid="profile-set-key" onClick={onSetKey}>
              {t("models.setKey")}
            </button>
          </>
        )}
      </div>
      <WindowLine profile={p} />
      <FormLine profile={p} />
      <div className="small muted">
        {p.lastTestedAt
          ? t(p.health === "ok" && p.lastLatencyMs !== undefined ? "models.testedOk" : "models.testedAt", {
              time: formatTime(lang, p.lastTestedAt, now()),
              ms: p.lastLatencyMs ?? 0,
            })
          : t("models.neverTested")}
        {lastError && test?.state !== "done" && (
          <span className="danger-text">
            {" "}
            · {lastError.title}
            {lastError.details[0] ? ` ${lastError.details[0]}` : ""}
          </span>
        )}
      </div>
      {running && (
        <p className="progress small muted" role="status" data-testid="test-running">
          <span className="spinner" aria-hidden="true" /> {t("models.testing", { url: p.baseUrl })}
        </p>
      )}
      {test?.state === "done" && <TestResult result={test.result} />}
      {test?.state === "error" && <ErrorBanner error={test.error} retry={onTest} />}
      {error && <ErrorBanner error={error} />}
    </li>
  );
}

/** A profile's context window and where it comes from; a warning when the person's
 * figure and the server's differ. */
function WindowLine({ profile: p }: { profile: LlmProfile }) {
  const { t } = useApp();
  const server = p.serverWindow;
  const source = server ? t(`models.windowSource.${server.source}` as MessageId) : "";
  const origin = p.contextWindowOrigin;
  const exact = server !== undefined && server.source !== "ollamaModelMax" && server.source !== "lmStudioModelMax";
  if (origin === "person" && server && exact && server.tokens !== p.contextWindow) {
    return (
      <div className="small warning-text" data-testid="profile-window" data-origin={origin} data-disagrees="true">
        {t("models.windowDisagrees", { configured: p.contextWindow, server: server.tokens, source })}
      </div>
    );
  }
  const text =
    origin === "server" && server
      ? t("models.windowServer", { tokens: p.contextWindow, source })
      : origin === "assumed"
        ? server
          ? t("models.windowAssumedMax", { tokens: p.contextWindow, max: server.tokens, source })
          : t("models.windowAssumed", { tokens: p.contextWindow })
        : t("models.windowPerson", { tokens: p.contextWindow });
  return (
    <div className="small muted" data-testid="profile-window" data-origin={origin}>
      {text}
    </div>
  );
}

/** The structured-output form the profile's calls use, and how it was learnt: at the
 * test, from a refusal at work, or assumed from the settings. */
function FormLine({ profile: p }: { profile: LlmProfile }) {
  const { t } = useApp();
  const found = p.structuredForm;
  const name = (form: SchemaForm) => t(`models.form.${form}` as MessageId);
  const form: SchemaForm = found?.form ?? (p.supportsJsonSchema ? p.schemaForm : "instructions");
  const refused = (found?.refused ?? []).map((r) => name(r.form)).join(", ");
  const text = !found
    ? t("models.formSettings", { form: name(form) })
    : found.source === "refusal"
      ? t("models.formRefusal", { form: name(form), refused })
      : refused
        ? t("models.formTestedRefused", { form: name(form), refused })
        : t("models.formTested", { form: name(form) });
  return (
    <div className="small muted" data-testid="profile-structured-form" data-form={form} data-source={found?.source ?? "settings"}>
      {text}
    </div>
  );
}

function TestResult({ result }: { result: LlmTestResult }) {
  const { t, lang } = useApp();
  if (result.ok) {
    return (
      <>
        <p className="test-result test-ok" role="status" data-testid="test-result" data-ok="true">
          ✓ {t("models.testOk", { model: modelLabel(result.modelId ?? result.profile.model), ms: result.latencyMs ?? 0 })}
        </p>
        {(result.warnings ?? []).map((w) => (
          <p key={w.id} className="small warning-text" data-testid="test-warning" data-id={w.id}>
            {describeHint(lang, w)}
          </p>
        ))}
      </>
    );
  }
  const error = result.error ?? { code: "INTERNAL" as const, message: "", hints: [] };
  const { title, details } = describeError(lang, error);
  return (
    <div className="test-result test-failed" role="alert" data-testid="test-result" data-ok="false" data-code={error.code}>
      <p className="error-title">✕ {title}</p>
      {details.map((d) => (
        <p key={d} className="small">
          {d}
        </p>
      ))}
    </div>
  );
}

// ---------------------------------------------------------------------------
// The add / edit form

const OTHER = "\u0000other";

/** The list failed only for want of a key: asked without one (a URL being typed), or the
 * profile's key is not set or gone from the keychain. The key field below says why. */
function needsKeyToList(models: { error: ClientError; keyless: boolean }): boolean {
  if (models.error.code !== "PROVIDER_AUTH") return false;
  const details = models.error.details as { keyMissing?: boolean } | undefined;
  return models.keyless || details?.keyMissing === true;
}

function ProfileForm({
  start,
  presets,
  envKeyActive,
  keyGone,
  onCancel,
  onSaved,
}: {
  start: FormStart;
  presets: LlmPreset[];
  envKeyActive: boolean;
  /** The saved key is no longer in the system keychain. */
  keyGone: boolean;
  onCancel: () => void;
  onSaved: (profile: LlmProfile, warnings: Hint[]) => void;
}) {
  const { client, t, toast, lang } = useApp();
  const [form] = useState(() => new ProfileFormModel(client, start, presets, lang));
  const st = useSyncExternalStore(form.subscribe, form.getSnapshot);
  useEffect(() => form.start(), [form]);
  const initial = form.initial;
  const focusKey = "profile" in start && start.setKey === true;
  const { saved, presetId, name, baseUrl, model, customModel, embeddingModel, keyRequired, keyChoiceMade, enabled, apiKey, removeKey, allowPlain } = st;
  const { timeoutS, contextWindow, maxOutput, priceIn, priceOut, jsonSchema, schemaForm, toolLoading, proxyUrl, caCertPath, models, saving, error, keyError } = st;
  const field =
    <K extends keyof ProfileFields>(k: K) =>
    (v: ProfileFields[K]) =>
      form.set(k, v);
  const [setName, setBaseUrl, setModel, setCustomModel, setEmbeddingModel] = [field("name"), field("baseUrl"), field("model"), field("customModel"), field("embeddingModel")];
  const [setKeyRequired, setKeyChoiceMade, setEnabled, setApiKey, setRemoveKey, setAllowPlain] = [
    field("keyRequired"),
    field("keyChoiceMade"),
    field("enabled"),
    field("apiKey"),
    field("removeKey"),
    field("allowPlain"),
  ];
  const [setTimeoutS, setContextWindow, setMaxOutput, setPriceIn, setPriceOut] = [field("timeoutS"), field("contextWindow"), field("maxOutput"), field("priceIn"), field("priceOut")];
  const [setJsonSchema, setSchemaForm, setToolLoading, setProxyUrl, setCaCertPath] = [field("jsonSchema"), field("schemaForm"), field("toolLoading"), field("proxyUrl"), field("caCertPath")];
  const setError = (_: null) => form.clearErrors();
  const setKeyError = setError;
  const loadModels = (url: string) => form.loadModels(url);
  const pickPreset = (id: string) => form.pickPreset(id);
  const { numbers, sendsKey, clearWarning, canSave } = form.derived(st);

  const save = async () => {
    const done = await form.save();
    if (!done) return;
    toast(t("common.saved"));
    onSaved(done.profile, done.warnings);
  };

  // The server's models to pick from; a value it does not offer (typed, or saved
  // earlier) stays selectable as such, and "Other" leads back to typing.
  const modelPicker = models.state === "ok" && !customModel;

  return (
    <form
      className="form profile-form"
      data-testid="profile-form"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
      onKeyDown={(e) => {
        // Esc closes this form only (the settings stay open; App skips a handled Esc).
        if (e.key === "Escape" && !e.nativeEvent.isComposing) {
          e.preventDefault();
          onCancel();
        }
      }}
    >
      <h3 className="section-title">{initial ? t("models.editTitle", { name: initial.name }) : t("models.newTitle")}</h3>
      <label className="field">
        <span className="small muted">{t("models.preset")}</span>
        <select data-testid="profile-preset" value={presetId} onChange={(e) => pickPreset(e.target.value)}>
          <option value="">{t("models.presetCustom")}</option>
          <optgroup label={t("models.presetsLocal")}>
            {presets
              .filter((p) => p.local)
              .map((p) => (
                <option key={p.id} value={p.id}>
                  {presetLabel(lang, p)}
                </option>
              ))}
          </optgroup>
          <optgroup label={t("models.presetsHosted")}>
            {presets
              .filter((p) => !p.local)
              .map((p) => (
                <option key={p.id} value={p.id}>
                  {presetLabel(lang, p)}
                </option>
              ))}
          </optgroup>
        </select>
      </label>
      <label className="field">
        <span className="small muted">{t("library.name")}</span>
        <input data-testid="profile-name" autoFocus={!focusKey} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <div className="field">
        <label className="small muted" htmlFor="profile-base-url">
          {t("models.baseUrl")}
        </label>
        <div className="row">
          <input
            id="profile-base-url"
            data-testid="profile-base-url"
            placeholder="http://127.0.0.1:11434/v1"
            spellCheck={false}
            value={baseUrl}
            onChange={(e) => {
              setBaseUrl(e.target.value);
              if (!keyChoiceMade) setKeyRequired(!isLocalServer(e.target.value));
            }}
            onBlur={() => {
              if (baseUrl.trim() && models.state !== "loading") void loadModels(baseUrl);
            }}
          />
        </div>
        <span className="small muted">{t("models.baseUrlHelp")}</span>
      </div>
      <div className="field">
        <label className="small muted" htmlFor={modelPicker ? "profile-model-select" : "profile-model"}>
          {t("models.model")}
        </label>
        <div className="row">
          {modelPicker ? (
            <select
              id="profile-model-select"
              data-testid="profile-model-select"
              value={model}
              onChange={(e) => {
                if (e.target.value === OTHER) setCustomModel(true);
                else setModel(e.target.value);
              }}
            >
              {model === "" && <option value="">{t("models.pickModel")}</option>}
              {model !== "" && !models.models.includes(model) && <option value={model}>{t("models.modelNotOffered", { model: modelLabel(model) })}</option>}
              {models.models.map((m) => (
                <option key={m} value={m} title={m}>
                  {modelLabel(m)}
                </option>
              ))}
              <option value={OTHER}>{t("models.otherModel")}</option>
            </select>
          ) : (
            <input
              id="profile-model"
              data-testid="profile-model"
              spellCheck={false}
              value={model}
              onChange={(e) => setModel(e.target.value)}
            />
          )}
          <button
            type="button"
            className="small-btn"
            data-testid="profile-models-load"
            disabled={!baseUrl.trim() || models.state === "loading"}
            onClick={() => {
              setCustomModel(false);
              void loadModels(baseUrl);
            }}
          >
            {t("models.loadModels")}
          </button>
        </div>
        <span className="small muted" role="status" data-testid="models-state">
          {models.state === "loading" && t("models.modelsLoading")}
          {models.state === "ok" && t("models.modelsFound", { n: models.models.length })}
          {models.state === "none" && t("models.modelsNone")}
          {models.state === "failed" && (needsKeyToList(models) ? t("models.modelsNeedKey") : t("models.modelsFailed"))}
        </span>
        {models.state === "failed" && !needsKeyToList(models) && (
          <div className="small warning" data-testid="models-error" data-code={models.error.code}>
            <ErrorText error={models.error} />
          </div>
        )}
      </div>
      <div className="field">
        <label className="small muted" htmlFor="profile-embedding-model">
          {t("models.embeddingModel")}
        </label>
        <input
          id="profile-embedding-model"
          data-testid="profile-embedding-model"
          spellCheck={false}
          list={models.state === "ok" ? "profile-embedding-models" : undefined}
          placeholder={t("models.optional")}
          aria-describedby="profile-embedding-help"
          value={embeddingModel}
          onChange={(e) => setEmbeddingModel(e.target.value)}
        />
        {models.state === "ok" && (
          <datalist id="profile-embedding-models">
            {models.models
              .filter((m) => /embed|bge|e5|gte/i.test(m))
              .map((m) => (
                <option key={m} value={m} />
              ))}
          </datalist>
        )}
        <span id="profile-embedding-help" className="small muted">
          {t("models.embeddingHelp")}
        </span>
      </div>
      <label className="check">
        <input
          type="checkbox"
          data-testid="profile-no-key"
          checked={!keyRequired}
          onChange={(e) => {
            setKeyRequired(!e.target.checked);
            setKeyChoiceMade(true);
          }}
        />
        {t("models.noKeyNeededLabel")}
      </label>
      <div className="field">
        <label className="small muted" htmlFor="profile-api-key">
          {t("models.apiKey")}
        </label>
        <div className="row">
          <input
            id="profile-api-key"
            data-testid="profile-api-key"
            autoFocus={focusKey}
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder={
              saved?.keyFingerprint && !removeKey && !keyGone
                ? t("models.keyReplace", { fp: maskedFingerprint(saved.keyFingerprint) })
                : keyRequired
                  ? t("models.keyPlaceholder")
                  : t("models.keyOptional")
            }
            value={apiKey}
            onChange={(e) => {
              setApiKey(e.target.value);
              if (e.target.value) setRemoveKey(false);
            }}
          />
          {saved?.keyFingerprint && (
            <button
              type="button"
              className="small-btn"
              data-testid="profile-key-remove"
              aria-pressed={removeKey}
              disabled={sendsKey}
              onClick={() => setRemoveKey(!removeKey)}
            >
              {t("models.keyRemove")}
            </button>
          )}
        </div>
        <span className="small muted">
          {removeKey
            ? t("models.keyWillRemove")
            : saved?.keyFingerprint && keyGone
              ? t("models.keyGoneHelp", { fp: maskedFingerprint(saved.keyFingerprint) })
              : saved?.keyFingerprint
                ? t("models.keyStoredHelp", { fp: maskedFingerprint(saved.keyFingerprint) })
                : t("models.keyHelp")}
        </span>
        {envKeyActive && <span className="small notice">{t("models.envKeyActive")}</span>}
      </div>
      {clearWarning && (
        <div className="warning plain-http" role="alert" data-testid="plain-http-warning">
          <p>{t("hint.plain_http_key")}</p>
          {sendsKey && (
            <label className="check">
              <input type="checkbox" data-testid="profile-allow-plain" checked={allowPlain} onChange={(e) => setAllowPlain(e.target.checked)} />
              {t("models.allowPlainHttp")}
            </label>
          )}
        </div>
      )}
      <details className="advanced">
        <summary>{t("models.advanced")}</summary>
        <div className="form advanced-body">
          <label className="check">
            <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
            {t("models.enabled")}
          </label>
          <div className="grid-2">
            <NumberField label={t("models.timeout")} value={timeoutS} onChange={setTimeoutS} bad={numbers.timeoutS === null} />
            <NumberField
              label={t("models.contextWindow")}
              value={contextWindow}
              onChange={setContextWindow}
              bad={numbers.contextWindow === null}
              placeholder={initial?.serverWindow ? t("models.contextWindowServer", { tokens: initial.serverWindow.tokens }) : t("models.contextWindowAuto")}
            />
            <NumberField label={t("models.maxOutput")} value={maxOutput} onChange={setMaxOutput} bad={numbers.maxOutputTokens === null} placeholder={t("models.optional")} />
            <span />
            <NumberField label={t("models.priceIn")} value={priceIn} onChange={setPriceIn} bad={numbers.inputPricePerMtok === null} placeholder={t("models.optional")} step="any" />
            <NumberField label={t("models.priceOut")} value={priceOut} onChange={setPriceOut} bad={numbers.outputPricePerMtok === null} placeholder={t("models.optional")} step="any" />
          </div>
          <span className="small muted">{t("models.priceHelp")}</span>
          <label className="check">
            <input type="checkbox" checked={jsonSchema} onChange={(e) => setJsonSchema(e.target.checked)} />
            {t("models.jsonSchema")}
          </label>
          {jsonSchema && (
            <label className="field">
              <span className="small muted">{t("models.schemaForm")}</span>
              <select value={schemaForm} data-testid="profile-schema-form" onChange={(e) => setSchemaForm(e.target.value as SchemaForm)}>
                <option value="responseFormat">{t("models.schemaForm.responseFormat")}</option>
                <option value="jsonObject">{t("models.schemaForm.jsonObject")}</option>
              </select>
            </label>
          )}
          <label className="field">
            <span className="small muted">{t("models.toolLoading")}</span>
            <select value={toolLoading} data-testid="profile-tool-loading" onChange={(e) => setToolLoading(e.target.value as ToolLoading)}>
              <option value="all">{t("models.toolLoading.all")}</option>
              <option value="onDemand">{t("models.toolLoading.onDemand")}</option>
            </select>
          </label>
          <label className="field">
            <span className="small muted">{t("models.proxy")}</span>
            <input value={proxyUrl} placeholder="http://proxy.example:8080" spellCheck={false} onChange={(e) => setProxyUrl(e.target.value)} />
          </label>
          <label className="field">
            <span className="small muted">{t("models.caCert")}</span>
            <input value={caCertPath} placeholder="/etc/ssl/company-ca.pem" spellCheck={false} onChange={(e) => setCaCertPath(e.target.value)} />
          </label>
        </div>
      </details>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {keyError && (
        <div className="error-banner" role="alert" data-testid="key-error" data-outcome={keyError.outcome} data-code={keyError.error.code}>
          <p className="error-title">{t(`models.${keyError.outcome}`)}</p>
          <ErrorText error={keyError.error} />
          <div className="error-actions">
            <button type="button" onClick={() => setKeyError(null)}>
              {t("error.dismiss")}
            </button>
          </div>
        </div>
      )}
      <div className="row end">
        <button type="button" onClick={onCancel}>
          {t("common.cancel")}
        </button>
        <button type="submit" className="primary" data-testid="profile-save" disabled={!canSave}>
          {saving ? t("models.saving") : t("common.save")}
        </button>
      </div>
    </form>
  );
}

/**
 * An error's wording in the person's language: what happened, then what to do (its
 * hints). The core's English message can carry system detail (a D-Bus address, an OS
 * error); it stays out of the headline, folded under "Technical details".
 */
function ErrorText({ error }: { error: ClientError }) {
  const { t, lang } = useApp();
  const { title } = describeError(lang, error);
  const hints = error.hints.map((h) => describeHint(lang, h)).filter((h, i, all) => h && all.indexOf(h) === i);
  const technical = error.message && error.message !== title ? error.message : null;
  return (
    <>
      <p data-testid="error-text-title">{title}</p>
      {hints.map((h) => (
        <p key={h} className="small">
          {h}
        </p>
      ))}
      {technical && (
        <details className="small" data-testid="error-technical">
          <summary>{t("models.technicalDetails")}</summary>
          {technical}
        </details>
      )}
    </>
  );
}

function NumberField({
  label,
  value,
  onChange,
  bad,
  placeholder,
  step,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  bad: boolean;
  placeholder?: string;
  step?: string;
}) {
  return (
    <label className="field">
      <span className="small muted">{label}</span>
      <input
        type="number"
        min={0}
        step={step}
        inputMode="decimal"
        value={value}
        placeholder={placeholder}
        aria-invalid={bad || undefined}
        onChange={(e) => onChange(e.target.value)}
      />
    </label>
  );
}
