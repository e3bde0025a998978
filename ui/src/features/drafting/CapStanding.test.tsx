// The member's standing beside the AI panel's meter: shown only under a cap, in both
// languages, warning near the cap and saying calls are refused once it is reached, and
// read again after each metered call.
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import type { CapStanding as Standing } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { CapStanding } from "./CapStanding";

afterEach(cleanup);

const base: Standing = {
  month: "2026-11",
  spent: { tokens: 120_000, costUsd: 1.2 },
  capUsd: 5,
  level: "under",
  workspaceName: "团队",
  setBy: "Olga",
  setAt: "2026-11-20T09:00:00Z",
};

function show(standing: () => Standing, lang: Lang = "en", spent = 0) {
  const transport = new FakeTransport().on("usage.standing", standing);
  const ctx = makeCtx(transport, lang);
  const view = render(
    <WithCtx ctx={ctx}>
      <CapStanding spent={spent} />
    </WithCtx>,
  );
  const rerender = (next: number) =>
    view.rerender(
      <WithCtx ctx={ctx}>
        <CapStanding spent={next} />
      </WithCtx>,
    );
  return { transport, rerender };
}

describe("the standing beside the AI panel's meter", () => {
  it("shows this month's spend of the cost cap, and who set it on hover", async () => {
    show(() => base);
    const line = await screen.findByTestId("cap-standing");
    expect(line.textContent).toBe("this month: $1.20 of $5.00");
    expect(line.dataset.level).toBe("under");
    expect(line.getAttribute("role")).toBeNull();
    expect(line.getAttribute("title")).toContain('The workspace "团队"');
    expect(line.getAttribute("title")).toContain("set by Olga");
  });

  it("warns near the cap and says calls are refused once it is reached", async () => {
    let level: Standing = { ...base, spent: { tokens: 0, costUsd: 4.1 }, level: "near" };
    const { rerender } = show(() => level);
    const near = await screen.findByTestId("cap-standing");
    expect(near.textContent).toBe("this month: $4.10 of $5.00 · near the cap");
    expect(near.dataset.level).toBe("near");
    expect(near.className).toContain("cap-near");
    expect(near.getAttribute("role")).toBe("status");

    // A call was metered (the session's tokens moved): read again.
    level = { ...base, spent: { tokens: 0, costUsd: 5.02 }, level: "reached" };
    rerender(900);
    await waitFor(() => expect(screen.getByTestId("cap-standing").dataset.level).toBe("reached"));
    const reached = screen.getByTestId("cap-standing");
    expect(reached.textContent).toBe("this month: $5.02 of $5.00 · cap reached: AI calls are refused");
    expect(reached.className).toContain("cap-reached");
    expect(reached.getAttribute("title")).toContain("refused until next month");
  });

  it("shows a token cap, and both caps together, in Chinese", async () => {
    show(() => ({ ...base, capUsd: undefined, capTokens: 200_000, spent: { tokens: 190_000, costUsd: 0 }, level: "near" }), "zh");
    const line = await screen.findByTestId("cap-standing");
    expect(line.textContent).toBe("本月：190,000 / 200,000 词元 · 接近上限");
    expect(line.getAttribute("title")).toContain("由 Olga 设定");
    cleanup();
    show(() => ({ ...base, capTokens: 200_000, level: "reached" }), "zh");
    const both = await screen.findByTestId("cap-standing");
    expect(both.textContent).toBe("本月：$1.20 / $5.00 · 120,000 / 200,000 词元 · 已达上限：AI 调用将被拒绝");
  });

  it("shows nothing without a cap", async () => {
    const { transport } = show(() => ({ month: "2026-11", spent: { tokens: 5, costUsd: 0 }, level: "none" }));
    await waitFor(() => expect(transport.callsTo("usage.standing").length).toBe(1));
    expect(screen.queryByTestId("cap-standing")).toBeNull();
  });
});
