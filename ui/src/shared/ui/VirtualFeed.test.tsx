import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualFeed } from "./VirtualFeed";

afterEach(() => cleanup());

/** Gives the scroller a layout (jsdom has none): `height` of content in a 300 px viewport. */
function layout(el: HTMLElement, height: () => number) {
  let top = 0;
  Object.defineProperty(el, "scrollHeight", { configurable: true, get: height });
  Object.defineProperty(el, "clientHeight", { configurable: true, get: () => 300 });
  Object.defineProperty(el, "scrollTop", {
    configurable: true,
    get: () => top,
    set: (v: number) => {
      top = Math.max(0, Math.min(v, height() - 300));
    },
  });
}

const labels = { latest: "Jump to latest ↓", unseen: "New messages ↓" };

function Feed({ items, reveal }: { items: string[]; reveal: number }) {
  return <VirtualFeed items={items} getKey={(s) => s} renderItem={(s) => <p>{s}</p>} estimate={40} label="feed" testId="feed" revealKey={reveal} jumpLabels={labels} />;
}

describe("VirtualFeed", () => {
  it("scrolled up, stays put and offers the way back; sending goes back to the bottom", () => {
    const items = ["a", "b", "c"];
    const { rerender } = render(<Feed items={items} reveal={0} />);
    const el = screen.getByTestId("feed");
    let height = 1000;
    layout(el, () => height);
    expect(screen.queryByTestId("feed-jump")).toBeNull();
    // The reader scrolls up 300 px.
    el.scrollTop = 400;
    fireEvent.scroll(el);
    expect(screen.getByTestId("feed-jump").textContent).toBe("Jump to latest ↓");
    // A row arrives: the reader stays where they are, and the button says there is news.
    height = 1100;
    rerender(<Feed items={[...items, "d"]} reveal={0} />);
    expect(el.scrollTop).toBe(400);
    expect(screen.getByTestId("feed-jump").textContent).toBe("New messages ↓");
    // The person sends a task: the feed goes to the bottom and the button goes away.
    height = 1200;
    rerender(<Feed items={[...items, "d", "e"]} reveal={1} />);
    expect(el.scrollTop).toBe(900);
    expect(screen.queryByTestId("feed-jump")).toBeNull();
    // ...and sticks there as the answer grows.
    height = 1500;
    rerender(<Feed items={[...items, "d", "e", "f"]} reveal={1} />);
    expect(el.scrollTop).toBe(1200);
  });

  it("the button goes back to the bottom", () => {
    render(<Feed items={["a", "b"]} reveal={0} />);
    const el = screen.getByTestId("feed");
    layout(el, () => 1000);
    el.scrollTop = 100;
    fireEvent.scroll(el);
    act(() => screen.getByTestId("feed-jump").click());
    expect(el.scrollTop).toBe(700);
    expect(screen.queryByTestId("feed-jump")).toBeNull();
  });
});
