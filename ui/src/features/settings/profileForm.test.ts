// The model-profile form's model on its own, against the typed fake transport.
import { describe, expect, it } from "vitest";
import { ApiClient } from "../../shared/api/client";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { LlmPreset, LlmProfileInput } from "../../shared/api/generated";
import { profile } from "../../shared/testing/fixtures";
import { ProfileFormModel } from "./profileForm";

const OLLAMA: LlmPreset = {
  id: "ollama",
  label: "Ollama",
  baseUrl: "http://127.0.0.1:11434/v1",
  exampleModel: "qwen3:8b",
  keyRequired: false,
  local: true,
  supportsJsonSchema: true,
  schemaForm: "responseFormat",
  toolLoading: "onDemand",
};

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

describe("ProfileFormModel", () => {
  it("a preset fills the form and the server's list replaces its usual model; an older list answer is dropped", async () => {
    const first = deferred<{ models: string[] }>();
    const answers = [first.promise, Promise.resolve({ models: ["llama3.2"] })];
    const transport = new FakeTransport().on("llmProfile.models", () => answers.shift()!);
    const form = new ProfileFormModel(new ApiClient(transport), { preset: null }, [OLLAMA], "en");
    void form.loadModels("http://127.0.0.1:9/v1");
    form.pickPreset("ollama");
    await Promise.resolve();
    await Promise.resolve();
    first.resolve({ models: ["stale-model"] });
    await first.promise;
    await Promise.resolve();
    const st = form.getSnapshot();
    expect(st).toMatchObject({ name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", keyRequired: false, toolLoading: "onDemand", jsonSchema: true });
    // The preset's usual model is not offered: it gives way to the server's only one.
    expect(st.models).toEqual({ state: "ok", models: ["llama3.2"] });
    expect(st.model).toBe("llama3.2");
    expect(transport.callsTo("llmProfile.models")).toEqual([{ baseUrl: "http://127.0.0.1:9/v1" }, { baseUrl: "http://127.0.0.1:11434/v1" }]);
  });

  it("cannot save with a number that does not parse, or a key about to travel over plain http", () => {
    const form = new ProfileFormModel(new ApiClient(new FakeTransport()), { preset: OLLAMA }, [OLLAMA], "en");
    expect(form.derived().canSave).toBe(true);
    form.set("timeoutS", "sixty");
    expect(form.derived()).toMatchObject({ badNumber: true, canSave: false });
    form.set("timeoutS", "60");
    form.set("baseUrl", "http://192.168.1.9:8080/v1");
    form.set("apiKey", "sk-123");
    expect(form.derived()).toMatchObject({ blockedByPlainHttp: true, clearWarning: true, canSave: false });
    form.set("allowPlain", true);
    expect(form.derived().canSave).toBe(true);
  });

  it("a save refused for another reason rejects with the error for the caller to report, and keeps the fields", async () => {
    const transport = new FakeTransport().on("llmProfile.create", () => {
      throw apiError("VALIDATION", "`model` is empty.");
    });
    const form = new ProfileFormModel(new ApiClient(transport), { preset: null }, [], "en");
    form.set("name", "Work");
    form.set("baseUrl", "https://api.example.com/v1");
    form.set("model", "gpt-x");
    form.set("apiKey", "sk-secret");
    await expect(form.save()).rejects.toMatchObject({ code: "VALIDATION" });
    expect(form.getSnapshot()).toMatchObject({ name: "Work", apiKey: "sk-secret", saved: null, keyError: null, saving: false });
    expect("error" in form.getSnapshot()).toBe(false);
  });

  it("creates once, then updates the same profile: a key the keychain refused saved nothing and stays typed", async () => {
    let keychainWorks = false;
    const transport = new FakeTransport()
      .on("llmProfile.create", (p: LlmProfileInput) => {
        if (p.apiKey && !keychainWorks) throw apiError("KEYCHAIN_UNAVAILABLE", "no keychain");
        return { profile: profile({ id: "llm_9", name: p.name, baseUrl: p.baseUrl }), warnings: [] };
      })
      .on("llmProfile.update", ({ profile: id, changes }) => ({ profile: profile({ id, name: changes.name }), warnings: [] }));
    const form = new ProfileFormModel(new ApiClient(transport), { preset: null }, [], "en");
    form.set("name", "Work");
    form.set("baseUrl", "https://api.example.com/v1");
    form.set("model", "gpt-x");
    form.set("apiKey", "sk-secret");
    expect(await form.save()).toBeNull();
    expect(form.getSnapshot()).toMatchObject({ apiKey: "sk-secret", saved: null, keyError: { outcome: "keyNotStored.notCreated" } });

    keychainWorks = true;
    const done = await form.save();
    expect(done?.profile.id).toBe("llm_9");
    expect(form.getSnapshot()).toMatchObject({ apiKey: "", keyError: null, saving: false });
    form.set("name", "Work 2");
    await form.save();
    expect(transport.callsTo("llmProfile.create")).toHaveLength(2);
    expect(transport.callsTo("llmProfile.update")).toEqual([
      {
        profile: "llm_9",
        changes: {
          name: "Work 2",
          provider: "openai-compatible",
          baseUrl: "https://api.example.com/v1",
          model: "gpt-x",
          keyRequired: true,
          supportsJsonSchema: false,
          schemaForm: "responseFormat",
          toolLoading: "all",
          timeoutS: 60,
        },
      },
    ]);
  });
});
