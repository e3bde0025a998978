// One-click optimize with no model set up: said before the form is filled, with the
// way to set one up; a profile made meanwhile lifts it.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeTransport } from "../api/fake";
import type { LlmProfile } from "../api/generated";
import { profile } from "../drafting/fixtures";
import type { Lang } from "../i18n";
import { makeCtx, WithCtx } from "../test-utils";
import { OptimizeDialog } from "./OptimizeDialog";

afterEach(cleanup);

function setup(profiles: LlmProfile[], lang: Lang = "en") {
  const transport = new FakeTransport();
  transport.on("llmProfile.list", () => ({ profiles, envKeyActive: false }));
  transport.on("optimize.list", () => ({ runs: [] }));
  const ctx = makeCtx(transport, lang);
  const onSetUpModel = vi.fn();
  render(
    <WithCtx ctx={ctx}>
      <OptimizeDialog projectId="prj_1" platforms={["wechat"]} flush={async () => undefined} onApplied={() => undefined} onClose={() => undefined} onSetUpModel={onSetUpModel} />
    </WithCtx>,
  );
  return { transport, client: ctx.client, onSetUpModel };
}

describe("one-click optimize without a model", () => {
  it("says so, offers to set one up, and cannot start until one is made", async () => {
    const profiles: LlmProfile[] = [];
    const { transport, client, onSetUpModel } = setup(profiles);
    const notice = await screen.findByTestId("optimize-no-model");
    expect(notice.textContent).toContain("No AI model is set up yet");
    expect((screen.getByTestId("optimize-start") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId("optimize-set-up-model"));
    expect(onSetUpModel).toHaveBeenCalledOnce();
    // A profile made in Settings through the same client.
    transport.on("llmProfile.create", () => {
      profiles.push(profile());
      return { profile: profiles[0], warnings: [] };
    });
    await client.call("llmProfile.create", { name: "local", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen", keyRequired: false });
    await waitFor(() => expect(screen.queryByTestId("optimize-no-model")).toBeNull());
    expect((screen.getByTestId("optimize-start") as HTMLButtonElement).disabled).toBe(false);
  });

  it("in Chinese", async () => {
    setup([], "zh");
    expect((await screen.findByTestId("optimize-no-model")).textContent).toContain("还没有设置 AI 模型");
  });

  it("with a model, no notice", async () => {
    setup([profile()]);
    await waitFor(() => expect((screen.getByTestId("optimize-start") as HTMLButtonElement).disabled).toBe(false));
    expect(screen.queryByTestId("optimize-no-model")).toBeNull();
  });
});
