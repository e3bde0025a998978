// Live Markdown preview. markdown-it with raw HTML disabled (so the source cannot inject
// markup) and its link validation (no javascript: URLs). Images under media/ are read
// through the API (media.read) and shown as data URLs, in Tauri and in the browser.
import MarkdownIt from "markdown-it";
import { memo, useEffect, useMemo, useRef } from "react";
import type { ApiClient } from "../api/client";
import { fetchRead } from "../api/query";

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
const defaultImage = md.renderer.rules.image!;
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  const src = String(token.attrGet("src") ?? "");
  const m = /^media\/([^/?#]+)$/.exec(src);
  if (m) {
    token.attrSet("data-media", decodeURIComponent(m[1] ?? ""));
    token.attrSet("src", "data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==");
  }
  return defaultImage(tokens, idx, options, env, self);
};
md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener noreferrer");
  return self.renderToken(tokens, idx, options);
};

export function renderMarkdown(source: string): string {
  return md.render(source);
}

/** A project image as a data URL, or null when the project has no such file. The media
 * list and the bytes are reads in the query cache, shared by every preview of the page
 * and read again after a write adds media (methods.ts). */
export async function mediaUrl(client: ApiClient, projectId: string, fileName: string): Promise<string | null> {
  try {
    const list = await fetchRead(client, "media.list", { projectId });
    const asset = list.media.find((a) => a.fileName === fileName);
    if (!asset) return null;
    const r = await fetchRead(client, "media.read", { id: asset.id });
    return `data:${r.asset.mimeType};base64,${r.dataBase64}`;
  } catch {
    return null;
  }
}

/** Puts a visible placeholder with the image's alt text where a project image is missing. */
function showMissing(img: HTMLImageElement, fileName: string, missingImage: (alt: string) => string) {
  const box = document.createElement("span");
  box.className = "img-missing";
  box.setAttribute("role", "img");
  box.dataset.testid = "preview-image-missing";
  box.dataset.missing = fileName;
  box.dataset.alt = img.alt;
  box.title = `media/${fileName}`;
  box.textContent = missingImage(img.alt || fileName);
  img.replaceWith(box);
}

export const Preview = memo(function Preview({
  client,
  projectId,
  source,
  label,
  missingImage,
}: {
  client: ApiClient;
  projectId: string;
  source: string;
  label: string;
  /** The placeholder's wording for a project image that is not there, given its alt text. */
  missingImage: (alt: string) => string;
}) {
  const html = useMemo(() => renderMarkdown(source), [source]);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const root = ref.current;
    if (!root) return;
    // Placeholders already shown follow a change of language.
    for (const box of Array.from(root.querySelectorAll<HTMLElement>("[data-missing]"))) {
      box.textContent = missingImage(box.dataset.alt || box.dataset.missing!);
    }
    const imgs = root.querySelectorAll<HTMLImageElement>("img[data-media]");
    let live = true;
    for (const img of Array.from(imgs)) {
      const name = img.dataset.media!;
      void mediaUrl(client, projectId, name).then((url) => {
        if (!live || !img.isConnected) return;
        if (url) {
          img.src = url;
          img.dataset.loaded = "true";
        } else {
          showMissing(img, name, missingImage);
        }
      });
    }
    return () => {
      live = false;
    };
  }, [html, client, projectId, missingImage]);
  return (
    <div
      ref={ref}
      className="preview markdown-body"
      data-testid="preview"
      aria-label={label}
      // Safe: markdown-it escapes raw HTML (html: false) and refuses unsafe link schemes.
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
});
