import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { FakeTransport } from "../../shared/api/fake";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { Composer } from "./Composer";
import type { Selection } from "./scope";

afterEach(cleanup);

function renderComposer(selection: Selection | null, lang: "en" | "zh" = "en") {
  const sent: { task: string; selection: Selection | null }[] = [];
  render(
    <WithCtx ctx={makeCtx(new FakeTransport(), lang)}>
      <Composer
        selectionText={selection?.text ?? ""}
        getSelection={() => selection}
        dismissed={null}
        onDismiss={() => undefined}
        mode="default"
        running={false}
        onMode={() => undefined}
        onSend={(task, sel) => {
          sent.push({ task, selection: sel });
          return true;
        }}
      />
    </WithCtx>,
  );
  return sent;
}

describe("Composer", () => {
  it("says the key that sends: the button and the placeholder both name Enter, and Enter sends", async () => {
    const sent = renderComposer(null);
    const input = screen.getByTestId("composer-input") as HTMLTextAreaElement;
    expect(input.placeholder).toContain("Enter sends");
    expect(screen.getByTestId("send").querySelector("kbd")?.textContent).toBe("Enter");
    fireEvent.change(input, { target: { value: "把开头改短" } });
    fireEvent.keyDown(input, { key: "Enter", shiftKey: true });
    expect(sent).toEqual([]);
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(sent).toEqual([{ task: "把开头改短", selection: null }]));
    cleanup();
    renderComposer(null, "zh");
    expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).placeholder).toContain("Enter 发送");
    expect(screen.getByTestId("send").querySelector("kbd")?.textContent).toBe("Enter");
  });

  it("an empty or white-space selection is not sent as a scope; a real one is", async () => {
    const blank = renderComposer({ from: 4, to: 7, text: "\n  " });
    expect(screen.queryByTestId("scope-chip")).toBeNull();
    fireEvent.change(screen.getByTestId("composer-input"), { target: { value: "润色" } });
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() => expect(blank).toEqual([{ task: "润色", selection: null }]));
    cleanup();

    const real = renderComposer({ from: 0, to: 2, text: "春天" });
    expect(screen.getByTestId("scope-chip").textContent).toContain("春天");
    fireEvent.change(screen.getByTestId("composer-input"), { target: { value: "润色" } });
    fireEvent.click(screen.getByTestId("send"));
    await waitFor(() => expect(real).toEqual([{ task: "润色", selection: { from: 0, to: 2, text: "春天" } }]));
  });
});
