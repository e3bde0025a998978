// The model-profile form's larger sections, each rendering the form model
// (profileForm.ts) it is given: the model picker, the key field, the advanced settings,
// and the error and number fields they share with the profile list.
import type { ClientError } from "../../shared/api/client";
import type { SchemaForm, ToolLoading } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { describeError, describeHint } from "../../shared/i18n";
import { maskedFingerprint, modelLabel } from "./llm";
import type { ProfileFields, ProfileFormModel, ProfileFormState } from "./profileForm";

export const OTHER = "\u0000other";

type Section = { form: ProfileFormModel; st: ProfileFormState };
const setter =
  (form: ProfileFormModel) =>
  <K extends keyof ProfileFields>(k: K) =>
  (v: ProfileFields[K]) =>
    form.set(k, v);

/** The model: picked from the server's list when it gave one, else typed. */
export function ModelField({ form, st }: Section) {
  const { t } = useApp();
  const field = setter(form);
  const [setModel, setCustomModel] = [field("model"), field("customModel")];
  const { baseUrl, model, customModel, models } = st;
  const loadModels = (url: string) => form.loadModels(url);
  // The server's models to pick from; a value it does not offer (typed, or saved
  // earlier) stays selectable as such, and "Other" leads back to typing.
  const modelPicker = models.state === "ok" && !customModel;
  return (
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
  );
}

/** The API key: write-only, its stored fingerprint shown, removable. */
export function KeyField({ form, st, keyGone, envKeyActive, focusKey }: Section & { keyGone: boolean; envKeyActive: boolean; focusKey: boolean }) {
  const { t } = useApp();
  const field = setter(form);
  const [setApiKey, setRemoveKey] = [field("apiKey"), field("removeKey")];
  const { saved, keyRequired, apiKey, removeKey } = st;
  const { sendsKey } = form.derived(st);
  return (
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
  );
}

/** Timeouts, window, prices, structured output, tool loading, proxy and CA. */
export function AdvancedFields({ form, st }: Section) {
  const { t } = useApp();
  const field = setter(form);
  const [setEnabled, setTimeoutS, setContextWindow, setMaxOutput, setPriceIn, setPriceOut] = [
    field("enabled"),
    field("timeoutS"),
    field("contextWindow"),
    field("maxOutput"),
    field("priceIn"),
    field("priceOut"),
  ];
  const [setJsonSchema, setSchemaForm, setToolLoading, setProxyUrl, setCaCertPath] = [field("jsonSchema"), field("schemaForm"), field("toolLoading"), field("proxyUrl"), field("caCertPath")];
  const { enabled, timeoutS, contextWindow, maxOutput, priceIn, priceOut, jsonSchema, schemaForm, toolLoading, proxyUrl, caCertPath } = st;
  const { numbers } = form.derived(st);
  const initial = form.initial;
  return (
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
  );
}

/** The list failed only for want of a key: asked without one (a URL being typed), or the
 * profile's key is not set or gone from the keychain. The key field below says why. */
export function needsKeyToList(models: { error: ClientError; keyless: boolean }): boolean {
  if (models.error.code !== "PROVIDER_AUTH") return false;
  const details = models.error.details as { keyMissing?: boolean } | undefined;
  return models.keyless || details?.keyMissing === true;
}

/**
 * An error's wording in the person's language: what happened, then what to do (its
 * hints). The core's English message can carry system detail (a D-Bus address, an OS
 * error); it stays out of the headline, folded under "Technical details".
 */
export function ErrorText({ error }: { error: ClientError }) {
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

export function NumberField({
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
