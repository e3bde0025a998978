import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../shared/api/fake";
import { makeCtx, WithCtx } from "../shared/testing/utils";
import { type Command, CommandPalette, filterCommands } from "./CommandPalette";

afterEach(() => cleanup());

describe("CommandPalette", () => {
  const ran: string[] = [];
  const commands: Command[] = [
    { id: "save", label: "保存版本", keywords: "Save version", run: () => ran.push("save") },
    { id: "theme", label: "主题：深色", keywords: "Theme: dark", run: () => ran.push("theme") },
  ];

  it("matches by name in either language", () => {
    expect(filterCommands(commands, "保存").map((c) => c.id)).toEqual(["save"]);
    expect(filterCommands(commands, "theme dark").map((c) => c.id)).toEqual(["theme"]);
    expect(filterCommands(commands, "")).toHaveLength(2);
  });

  it("runs the highlighted command with Enter, not during a composition", async () => {
    let closed = 0;
    render(
      <WithCtx ctx={makeCtx(new FakeTransport())}>
        <CommandPalette commands={commands} onClose={() => closed++} />
      </WithCtx>,
    );
    const input = screen.getByTestId("palette-input");
    fireEvent.change(input, { target: { value: "dark" } });
    fireEvent.keyDown(input, { key: "Enter", isComposing: true });
    expect(closed).toBe(0);
    fireEvent.keyDown(input, { key: "Enter" });
    expect(closed).toBe(1);
    await new Promise((r) => setTimeout(r, 5));
    expect(ran).toEqual(["theme"]);
  });
});
