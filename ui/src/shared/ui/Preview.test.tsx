import { cleanup, render, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../api/client";
import { FakeTransport } from "../api/fake";
import type { MediaAsset } from "../api/generated";
import { Preview, renderMarkdown } from "./Preview";

afterEach(() => cleanup());

describe("Preview", () => {
  it("renders Markdown and escapes raw HTML and unsafe links", () => {
    const html = renderMarkdown("# 标题\n\n**粗体** <script>alert(1)</script> [x](javascript:alert(1))");
    expect(html).toContain("<h1>标题</h1>");
    expect(html).toContain("<strong>粗体</strong>");
    expect(html).not.toContain("<script>");
    expect(html).not.toContain('href="javascript:');
  });

  it("shows project images through media.read", async () => {
    const asset = { id: "med_1", fileName: "abc.png", mimeType: "image/png" } as MediaAsset;
    const transport = new FakeTransport()
      .on("media.list", () => ({ media: [asset] }))
      .on("media.read", () => ({ asset, dataBase64: "AAAA" }));
    const { container } = render(<Preview client={new ApiClient(transport)} projectId="p" source="![封面](media/abc.png)" label="Preview" missingImage={(alt) => alt} />);
    await waitFor(() => expect(container.querySelector("img")?.getAttribute("src")).toBe("data:image/png;base64,AAAA"));
    expect(container.querySelector("img")?.getAttribute("alt")).toBe("封面");
    expect(transport.callsTo("media.read")).toEqual([{ id: "med_1" }]);
  });

  it("shows a missing project image as a placeholder with its alt text", async () => {
    const transport = new FakeTransport().on("media.list", () => ({ media: [] }));
    const { container } = render(
      <Preview client={new ApiClient(transport)} projectId="p-missing" source="![缺失图片](media/nothing.png)" label="Preview" missingImage={(alt) => `Image not found: ${alt}`} />,
    );
    await waitFor(() => expect(container.querySelector("[data-testid=preview-image-missing]")?.textContent).toBe("Image not found: 缺失图片"));
    expect(container.querySelector("img")).toBeNull();
    expect(transport.callsTo("media.read")).toEqual([]);
  });
});
