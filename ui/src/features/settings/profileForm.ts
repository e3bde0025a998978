// The model-profile form's state outside React: the fields, the server's model list
// (only the newest request's answer is kept), what a preset fills in, what may be saved,
// and saving (create once, then update; the key travels with the save, and a refused
// key saved nothing). Models.tsx's ProfileForm renders it; profileForm.test.ts runs it
// against the typed fake transport.

import { type ApiClient, type ClientError, toClientError } from "../../shared/api/client";
import type { Hint, LlmPreset, LlmProfile, LlmProfileInput, SchemaForm, ToolLoading } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { chatModel, keyTravelsInClear, modelAfterListing, parseOptionalNumber, presetLabel } from "./llm";

/** The server's model list: `none` when it answered with an empty one; `failed` with why
 * (`keyless`: asked without a key, as for a URL being typed). */
export type ModelList =
  | { state: "idle" }
  | { state: "loading" }
  | { state: "ok"; models: string[] }
  | { state: "none" }
  | { state: "failed"; error: ClientError; keyless: boolean };

/** A key the keychain refused (the core then saved nothing), or a key it did not remove. */
export type KeyError = {
  error: ClientError;
  outcome: "keyNotStored.notCreated" | "keyNotStored.nothingSaved" | "keyNotRemoved";
};

/** What the form starts from: a saved profile (`setKey`: opened to enter its key), a preset
 * (maybe a detected local server), or nothing. */
export type FormStart = { profile: LlmProfile; setKey?: boolean } | { preset: LlmPreset | null; models?: string[] };

export interface ProfileFields {
  presetId: string;
  name: string;
  baseUrl: string;
  model: string;
  customModel: boolean;
  embeddingModel: string;
  keyRequired: boolean;
  /** A new custom profile follows its base URL (a server on this computer takes no key)
   * until the person sets "No key needed" or picks a preset, which decide instead. */
  keyChoiceMade: boolean;
  enabled: boolean;
  apiKey: string;
  removeKey: boolean;
  allowPlain: boolean;
  timeoutS: string;
  /** Empty unless the person set a figure: the server's own is read then (never a guess). */
  contextWindow: string;
  maxOutput: string;
  priceIn: string;
  priceOut: string;
  jsonSchema: boolean;
  schemaForm: SchemaForm;
  toolLoading: ToolLoading;
  proxyUrl: string;
  caCertPath: string;
}

export interface ProfileFormState extends ProfileFields {
  /** Once created, later saves update (a key that failed to save must not create a twin). */
  saved: LlmProfile | null;
  models: ModelList;
  saving: boolean;
  /** A key the keychain did not take or could not remove: said beside the key field,
   * with what was and was not saved. Any other failure of a save is the caller's to
   * report (`save` rejects with it). */
  keyError: KeyError | null;
}

export class ProfileFormModel {
  private st: ProfileFormState;
  private readonly listeners = new Set<() => void>();
  private modelsRequest = 0;
  readonly initial: LlmProfile | null;

  constructor(
    private readonly client: ApiClient,
    start: FormStart,
    private readonly presets: LlmPreset[],
    private readonly lang: Lang,
  ) {
    const initial = "profile" in start ? start.profile : null;
    const preset = "preset" in start ? start.preset : null;
    this.initial = initial;
    this.st = {
      saved: initial,
      presetId: preset?.id ?? "",
      name: initial?.name ?? (preset ? presetLabel(lang, preset) : ""),
      baseUrl: initial?.baseUrl ?? preset?.baseUrl ?? "",
      model: initial?.model ?? ("preset" in start ? chatModel(start.models ?? [], preset?.exampleModel) : undefined) ?? preset?.exampleModel ?? "",
      customModel: false,
      embeddingModel: initial?.embeddingModel ?? "",
      keyRequired: initial?.keyRequired ?? preset?.keyRequired ?? true,
      keyChoiceMade: initial !== null || preset !== null,
      enabled: (initial?.provider ?? "openai-compatible") !== "disabled",
      apiKey: "",
      removeKey: false,
      allowPlain: false,
      timeoutS: String(initial?.timeoutS ?? 60),
      contextWindow: initial && initial.contextWindowOrigin === "person" ? String(initial.contextWindow) : "",
      maxOutput: initial?.maxOutputTokens?.toString() ?? "",
      priceIn: initial?.inputPricePerMtok?.toString() ?? "",
      priceOut: initial?.outputPricePerMtok?.toString() ?? "",
      jsonSchema: initial?.supportsJsonSchema ?? preset?.supportsJsonSchema ?? false,
      schemaForm: initial?.schemaForm ?? preset?.schemaForm ?? "responseFormat",
      toolLoading: initial?.toolLoading ?? preset?.toolLoading ?? "all",
      proxyUrl: initial?.proxyUrl ?? "",
      caCertPath: initial?.caCertPath ?? "",
      // Editing: the picker is filled from the server straight away (see `start`).
      models: initial
        ? { state: "loading" }
        : "preset" in start && start.models && start.models.length > 0
          ? { state: "ok", models: start.models }
          : { state: "idle" },
      saving: false,
      keyError: null,
    };
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
  getSnapshot = (): ProfileFormState => this.st;

  private patch(p: Partial<ProfileFormState>) {
    this.st = { ...this.st, ...p };
    for (const l of this.listeners) l();
  }

  set<K extends keyof ProfileFields>(field: K, value: ProfileFields[K]) {
    this.patch({ [field]: value } as Pick<ProfileFields, K>);
  }
  clearKeyError() {
    this.patch({ keyError: null });
  }

  /** The editing form's picker is filled from the server when it opens. */
  start() {
    if (this.initial) void this.fetchModels(this.initial.baseUrl);
  }

  /** The chosen preset's usual model: a placeholder the server's list may replace. */
  get placeholderModel(): string | undefined {
    return this.presets.find((p) => p.id === this.st.presetId)?.exampleModel;
  }

  /** Asks the server for its models. Only the newest request's answer is kept; a failure
   * says why, and the model can still be typed. */
  fetchModels(url: string, placeholder = this.placeholderModel): Promise<void> {
    const request = ++this.modelsRequest;
    const saved = this.st.saved;
    // The saved profile's own endpoint lists with its stored key; a URL being typed, without one.
    const params = saved && url.trim() === saved.baseUrl ? { profile: saved.id } : { baseUrl: url.trim() };
    return this.client.call("llmProfile.models", params).then(
      (r) => {
        if (request !== this.modelsRequest) return;
        this.patch({
          models: r.models.length > 0 ? { state: "ok", models: r.models } : { state: "none" },
          model: modelAfterListing(this.st.model, r.models, placeholder),
        });
      },
      (e: unknown) => {
        if (request === this.modelsRequest) this.patch({ models: { state: "failed", error: toClientError(e), keyless: "baseUrl" in params } });
      },
    );
  }

  loadModels(url: string, placeholder = this.placeholderModel): Promise<void> {
    this.patch({ models: { state: "loading" } });
    return this.fetchModels(url, placeholder);
  }

  /** A preset fills in its address, key need, abilities, name (unless the person named it) and usual model. */
  pickPreset(id: string) {
    this.patch({ presetId: id });
    const preset = this.presets.find((p) => p.id === id);
    if (!preset) return;
    const name = this.st.name;
    const keepName = name.trim() && !this.presets.some((p) => p.label === name || presetLabel(this.lang, p) === name);
    this.patch({
      baseUrl: preset.baseUrl,
      keyRequired: preset.keyRequired,
      keyChoiceMade: true,
      jsonSchema: preset.supportsJsonSchema,
      schemaForm: preset.schemaForm,
      toolLoading: preset.toolLoading,
      name: keepName ? name : presetLabel(this.lang, preset),
      model: preset.exampleModel,
      customModel: false,
    });
    void this.loadModels(preset.baseUrl, preset.exampleModel);
  }

  /** What the fields say now: the numbers (null for one that does not parse), and whether it may be saved. */
  derived(st: ProfileFormState = this.st) {
    const numbers = {
      timeoutS: parseOptionalNumber(st.timeoutS),
      contextWindow: parseOptionalNumber(st.contextWindow),
      maxOutputTokens: parseOptionalNumber(st.maxOutput),
      inputPricePerMtok: parseOptionalNumber(st.priceIn),
      outputPricePerMtok: parseOptionalNumber(st.priceOut),
    };
    const badNumber = Object.values(numbers).some((n) => n === null);
    const sendsKey = st.apiKey.trim() !== "";
    const clearWarning = keyTravelsInClear(st.baseUrl) && (sendsKey || (st.keyRequired && !this.initial?.keyFingerprint));
    const blockedByPlainHttp = sendsKey && keyTravelsInClear(st.baseUrl) && !st.allowPlain;
    const canSave = st.name.trim() !== "" && st.baseUrl.trim() !== "" && st.model.trim() !== "" && !badNumber && !blockedByPlainHttp && !st.saving;
    return { numbers, badNumber, sendsKey, clearWarning, blockedByPlainHttp, canSave };
  }

  /** Saves the profile: the stored profile and the core's warnings, or null when it was
   * not saved and the state says why (the form cannot be saved, or `keyError`). Rejects
   * with any other failure, which the form sends to the app's one error banner. */
  async save(): Promise<{ profile: LlmProfile; warnings: Hint[] } | null> {
    const st = this.st;
    const { numbers, sendsKey, canSave } = this.derived(st);
    if (!canSave) return null;
    this.patch({ saving: true, keyError: null });
    const input: LlmProfileInput = {
      name: st.name.trim(),
      provider: st.enabled ? "openai-compatible" : "disabled",
      baseUrl: st.baseUrl.trim(),
      model: st.model.trim(),
      ...(st.embeddingModel.trim() ? { embeddingModel: st.embeddingModel.trim() } : {}),
      keyRequired: st.keyRequired,
      supportsJsonSchema: st.jsonSchema,
      schemaForm: st.schemaForm,
      toolLoading: st.toolLoading,
      // Set from the command line (`profile add --temperature --seed`); the form keeps them.
      ...(this.initial?.temperature !== undefined ? { temperature: this.initial.temperature } : {}),
      ...(this.initial?.seed !== undefined ? { seed: this.initial.seed } : {}),
    };
    for (const [k, v] of Object.entries(numbers)) if (typeof v === "number") (input as Record<string, unknown>)[k] = v;
    if (st.proxyUrl.trim()) input.proxyUrl = st.proxyUrl.trim();
    if (st.caCertPath.trim()) input.caCertPath = st.caCertPath.trim();
    const created = !st.saved;
    // The key travels with the save: the core stores both or neither.
    if (sendsKey) {
      input.apiKey = st.apiKey.trim();
      if (st.allowPlain) input.allowPlainHttp = true;
    }
    try {
      const result = st.saved
        ? await this.client.call("llmProfile.update", { profile: st.saved.id, changes: input })
        : await this.client.call("llmProfile.create", input);
      this.patch({ saved: result.profile });
      let profile = result.profile;
      if (st.removeKey && !sendsKey) {
        try {
          // Without `apiKey` the key is removed from the keychain.
          profile = await this.client.call("llmProfile.setKey", { profile: profile.id });
        } catch (e) {
          this.patch({ keyError: { error: toClientError(e), outcome: "keyNotRemoved" } });
          return null;
        }
      }
      this.patch({ apiKey: "" });
      return { profile, warnings: result.warnings };
    } catch (e) {
      const failure = toClientError(e);
      // A refused key saved nothing; the typed key stays in its field for another try.
      if (sendsKey && failure.code === "KEYCHAIN_UNAVAILABLE") {
        this.patch({ keyError: { error: failure, outcome: created ? "keyNotStored.notCreated" : "keyNotStored.nothingSaved" } });
        return null;
      }
      throw failure;
    } finally {
      this.patch({ saving: false });
    }
  }
}
