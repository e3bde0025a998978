// The model-profile form: a view of ProfileFormModel (profileForm.ts), which holds
// the fields, the model list and the save; the sections are in ProfileParts.tsx.
import { useEffect, useState, useSyncExternalStore } from "react";
import type { Hint, LlmPreset, LlmProfile } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { isLocalServer, presetLabel } from "./llm";
import { type FormStart, type ProfileFields, ProfileFormModel } from "./profileForm";
import { AdvancedFields, ErrorText, KeyField, ModelField } from "./ProfileParts";

export function ProfileForm({
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
  const { client, t, toast, lang, showError } = useApp();
  const [form] = useState(() => new ProfileFormModel(client, start, presets, lang));
  const st = useSyncExternalStore(form.subscribe, form.getSnapshot);
  useEffect(() => form.start(), [form]);
  const initial = form.initial;
  const focusKey = "profile" in start && start.setKey === true;
  const { presetId, name, baseUrl, embeddingModel, keyRequired, keyChoiceMade, allowPlain, models, saving, keyError } = st;
  const field =
    <K extends keyof ProfileFields>(k: K) =>
    (v: ProfileFields[K]) =>
      form.set(k, v);
  const [setName, setBaseUrl, setEmbeddingModel, setKeyRequired, setKeyChoiceMade, setAllowPlain] = [
    field("name"),
    field("baseUrl"),
    field("embeddingModel"),
    field("keyRequired"),
    field("keyChoiceMade"),
    field("allowPlain"),
  ];
  const pickPreset = (id: string) => form.pickPreset(id);
  const loadModels = (url: string) => form.loadModels(url);
  const { sendsKey, clearWarning, canSave } = form.derived(st);

  const save = async () => {
    // A failed save goes to the app's one error banner; the form stays with what was typed.
    const done = await form.save().catch((e: unknown) => {
      showError(e);
      return null;
    });
    if (!done) return;
    toast(t("common.saved"));
    onSaved(done.profile, done.warnings);
  };

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
      <ModelField form={form} st={st} />
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
      <KeyField form={form} st={st} keyGone={keyGone} envKeyActive={envKeyActive} focusKey={focusKey} />
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
      <AdvancedFields form={form} st={st} />
      {/* A key the keychain refused stays beside the form on purpose: it says what was and
          was not saved, and the typed key waits in its field for another try. */}
      {keyError && (
        <div className="error-banner" role="alert" data-testid="key-error" data-outcome={keyError.outcome} data-code={keyError.error.code}>
          <p className="error-title">{t(`models.${keyError.outcome}`)}</p>
          <ErrorText error={keyError.error} />
          <div className="error-actions">
            <button type="button" onClick={() => form.clearKeyError()}>
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
