import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { LlmPreset, LlmProfile, LocalServer } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { LocalModelOffer } from "./LocalOffer";

afterEach(() => {
  cleanup();
  window.localStorage.clear();
});

const ollama: LlmPreset = { id: "ollama", label: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", exampleModel: "qwen2.5:7b", keyRequired: false, local: true, supportsJsonSchema: true, schemaForm: "responseFormat", toolLoading: "onDemand" };

const llamaCpp: LlmPreset = { ...ollama, id: "llama-cpp", label: "llama.cpp server", baseUrl: "http://127.0.0.1:8080/v1", schemaForm: "jsonObject" };

function mount(profiles: LlmProfile[], onSetUp: () => void = () => undefined, found: LocalServer = { preset: ollama, models: ["qwen2.5:7b", "llama3"] }, lang: Lang = "en") {
  const transport = new FakeTransport()
    .on("llmProfile.list", () => ({ profiles, envKeyActive: false }))
    .on("llmProfile.detectLocal", () => ({ found: [found] }));
  render(
    <WithCtx ctx={makeCtx(transport, lang)}>
      <LocalModelOffer onSetUp={onSetUp} />
    </WithCtx>,
  );
  return transport;
}

describe("first-run offer of a local model server", () => {
  it("offers a detected server when there are no profiles; “Set it up” opens the models settings once", async () => {
    let opened = 0;
    mount([], () => opened++);
    const offer = await screen.findByTestId("local-offer");
    expect(offer.textContent).toContain("Ollama answers at http://127.0.0.1:11434/v1 with 2 models.");
    fireEvent.click(screen.getByTestId("local-offer-setup"));
    expect(opened).toBe(1);
    expect(screen.queryByTestId("local-offer")).toBeNull();
    cleanup();
    const again = mount([]);
    await waitFor(() => expect(again.calls.length).toBe(0));
    expect(screen.queryByTestId("local-offer")).toBeNull();
  });

  it("stays silent when a profile exists, and after “Not now”", async () => {
    const withProfile = mount([{ id: "llm_1" } as LlmProfile]);
    await waitFor(() => expect(withProfile.callsTo("llmProfile.list")).toHaveLength(1));
    expect(withProfile.callsTo("llmProfile.detectLocal")).toHaveLength(0);
    cleanup();
    mount([]);
    fireEvent.click(await screen.findByTestId("local-offer-dismiss"));
    expect(screen.queryByTestId("local-offer")).toBeNull();
    expect(window.localStorage.getItem("inkstone.localModelOffer")).toBe("dismissed");
  });

  it("names the server in the person's language and counts one model as one", async () => {
    mount([], undefined, { preset: llamaCpp, models: ["qwen2.5-7b-instruct"] }, "zh");
    const zh = (await screen.findByTestId("local-offer")).textContent ?? "";
    expect(zh).toContain("llama.cpp 服务器 在 http://127.0.0.1:8080/v1 提供 1 个模型");
    expect(zh).not.toContain("llama.cpp server");
    cleanup();
    mount([], undefined, { preset: llamaCpp, models: ["qwen2.5-7b-instruct"] }, "en");
    const en = (await screen.findByTestId("local-offer")).textContent ?? "";
    expect(en).toContain("answers at http://127.0.0.1:8080/v1 with 1 model.");
    expect(en).not.toMatch(/model\(s\)|1 models/);
  });
});
