import { describe, expect, it, vi } from "vitest";
import { beforeClose, FLUSH_BEFORE_CLOSE, installCloseGuard } from "./closeGuard";

describe("close guard", () => {
  it("answers the shell's close request only after every registered flush finished", async () => {
    let handler: (() => void) | null = null;
    const order: string[] = [];
    const done = vi.fn(async () => {
      order.push("done");
    });
    installCloseGuard({
      listen: async (event, h) => {
        expect(event).toBe(FLUSH_BEFORE_CLOSE);
        handler = h;
      },
      done,
    });
    let release: () => void = () => undefined;
    const unregister = beforeClose(
      () =>
        new Promise<void>((resolve) => {
          release = () => {
            order.push("saved");
            resolve();
          };
        }),
    );
    const failing = beforeClose(async () => {
      throw new Error("conflict");
    });
    handler!();
    await new Promise((r) => setTimeout(r, 10));
    expect(done).not.toHaveBeenCalled();
    release();
    await vi.waitFor(() => expect(done).toHaveBeenCalledTimes(1));
    expect(order).toEqual(["saved", "done"]);
    unregister();
    failing();
  });
});
