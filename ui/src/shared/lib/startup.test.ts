import { describe, expect, it, vi } from "vitest";

const painted = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 5)));

describe("startup marks", () => {
  it("the static first frame's paint is the first screen; what waits for the first screen waits for React's, which reports again", async () => {
    vi.resetModules();
    const { afterFirstScreen, firstScreenShown, markStartup, staticFrameShown } = await import("./startup");
    const sent: Record<string, number>[] = [];
    const send = (marks: Record<string, number>) => {
      sent.push(marks);
      return Promise.resolve();
    };
    const ran: string[] = [];
    afterFirstScreen(() => ran.push("deferred"));
    markStartup("page.static");
    await staticFrameShown(send);
    expect(sent).toHaveLength(1);
    expect(Object.keys(sent[0])).toEqual(expect.arrayContaining(["page.static", "page.painted"]));
    expect(sent[0]["page.react"]).toBeUndefined();
    expect(sent[0]["page.painted"]).toBeGreaterThanOrEqual(sent[0]["page.static"]);
    expect(ran).toEqual([]);

    firstScreenShown(send);
    firstScreenShown(send);
    await painted();
    expect(sent).toHaveLength(2);
    expect(sent[1]["page.painted"]).toBe(sent[0]["page.painted"]);
    expect(sent[1]["page.react"]).toBeGreaterThanOrEqual(sent[0]["page.painted"]);
    expect(ran).toEqual(["deferred"]);
  });

  it("without a static frame, React's paint is the first screen, reported once", async () => {
    vi.resetModules();
    const { firstScreenShown } = await import("./startup");
    const sent: Record<string, number>[] = [];
    const send = (marks: Record<string, number>) => {
      sent.push(marks);
      return Promise.resolve();
    };
    firstScreenShown(send);
    firstScreenShown(send);
    await painted();
    expect(sent).toHaveLength(1);
    expect(sent[0]["page.painted"]).toBeGreaterThanOrEqual(sent[0]["page.react"]);
  });
});
