// A draft as text outside the preview: what the clipboard gets (rich HTML for WeChat,
// plain text for every platform) and whether a card's topics are already in its body.
import type { Draft } from "../../shared/api/generated";

/** What a draft looks like as plain text (the clipboard's text/plain). */
export function draftPlainText(d: Draft): string {
  const c = d.content;
  switch (c.type) {
    case "html":
      return htmlToText(c.html);
    case "markdown":
      return c.markdown;
    case "thread":
      return c.posts.map((p) => p.text).join("\n\n");
    case "card": {
      const body = tagsInBody(c) ? c.body : `${c.body}\n\n${tagLine(c.tags)}`;
      return d.title ? `${d.title}\n\n${body}` : body;
    }
  }
}

function tagLine(tags: string[]): string {
  return tags.map((x) => `#${x}`).join(" ");
}

/** Whether a card's body already carries its topics (Douyin writes them into the
 * caption, as the app shows them); then they are not shown or copied a second time. */
export function tagsInBody(c: { body: string; tags: string[] }): boolean {
  return c.tags.length === 0 || c.body.includes(tagLine(c.tags));
}

function htmlToText(html: string): string {
  if (typeof DOMParser === "undefined") return html.replace(/<[^>]*>/g, "");
  const doc = new DOMParser().parseFromString(html, "text/html");
  // Block elements end a line; keep paragraphs apart.
  for (const el of Array.from(doc.body.querySelectorAll("p,h1,h2,h3,h4,h5,h6,li,figure,blockquote,pre,tr,section > section"))) {
    el.append("\n");
  }
  for (const br of Array.from(doc.body.querySelectorAll("br"))) br.replaceWith("\n");
  return (doc.body.textContent ?? "").replace(/\n{3,}/g, "\n\n").trim();
}

export async function copyDraft(d: Draft): Promise<void> {
  const plain = draftPlainText(d);
  const clip = navigator.clipboard;
  if (!clip) throw new Error("clipboard unavailable");
  if (d.content.type === "html" && typeof ClipboardItem !== "undefined" && clip.write) {
    try {
      await clip.write([
        new ClipboardItem({
          "text/html": new Blob([d.content.html], { type: "text/html" }),
          "text/plain": new Blob([plain], { type: "text/plain" }),
        }),
      ]);
      return;
    } catch {
      // fall back to plain text below
    }
  }
  await clip.writeText(plain);
}
