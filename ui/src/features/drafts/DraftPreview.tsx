// The faithful preview of one platform's draft: WeChat in a phone frame (its images read
// from the project's media), Zhihu's markdown rendered, X's thread with each post's
// weighted length, and Douyin's and Xiaohongshu's cards.
import MarkdownIt from "markdown-it";
import { useEffect, useMemo, useState } from "react";
import type { Draft } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { mediaUrl } from "../../shared/ui/Preview";
import { tagsInBody } from "./draftText";

export const X_LIMIT = 280;

// Zhihu preview: markdown-it with raw HTML off (the draft cannot inject markup).
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener noreferrer");
  return self.renderToken(tokens, idx, options);
};

const MEDIA_SRC = /src="media\/([^"/?#]+)"/g;

/** The HTML with `src="media/NAME"` images swapped for data URLs (for previews only). */
function useMediaResolved(html: string, projectId: string): string {
  const { client } = useApp();
  // The resolved HTML, with what it was resolved from: a new input shows as it is until
  // its images are read.
  const from = `${projectId}\n${html}`;
  const [resolved, setResolved] = useState<{ from: string; out: string } | null>(null);
  useEffect(() => {
    const names = [...new Set(Array.from(html.matchAll(MEDIA_SRC), (m) => m[1] ?? ""))];
    if (names.length === 0) return;
    let live = true;
    void Promise.all(names.map(async (n) => [n, await mediaUrl(client, projectId, decodeURIComponent(n))] as const)).then((pairs) => {
      if (!live) return;
      const urls = new Map(pairs.filter((p): p is readonly [string, string] => p[1] !== null));
      if (urls.size) setResolved({ from, out: html.replace(MEDIA_SRC, (m, n: string) => (urls.has(n) ? `src="${urls.get(n)}"` : m)) });
    });
    return () => {
      live = false;
    };
  }, [html, client, projectId, from]);
  return resolved?.from === from ? resolved.out : html;
}

function WechatPreview({ draft, html, projectId }: { draft: Draft; html: string; projectId: string }) {
  const { t } = useApp();
  const shown = useMediaResolved(html, projectId);
  return (
    <figure className="phone" data-testid="preview-wechat" aria-label={t("drafts.previewOf", { p: t("platform.wechat") })}>
      <figcaption className="small muted">{t("drafts.previewNote")}</figcaption>
      <div className="phone-screen">
        <h1 className="wx-title">{draft.title}</h1>
        <iframe title={t("drafts.previewOf", { p: t("platform.wechat") })} sandbox="" srcDoc={wechatDoc(shown)} width={375} height={520} />
      </div>
    </figure>
  );
}

function ZhihuPreview({ draft, markdown, projectId }: { draft: Draft; markdown: string; projectId: string }) {
  const rendered = useMemo(() => md.render(markdown), [markdown]);
  const shown = useMediaResolved(rendered, projectId);
  return (
    <div className="zhihu-preview" data-testid="preview-zhihu">
      <h1 className="zhihu-title">{draft.title}</h1>
      <div
        className="markdown-body"
        // Safe: markdown-it escapes raw HTML (html: false) and refuses unsafe link schemes.
        dangerouslySetInnerHTML={{ __html: shown }}
      />
    </div>
  );
}

export function DraftPreview({ draft, projectId }: { draft: Draft; projectId: string }) {
  const c = draft.content;
  switch (c.type) {
    case "html":
      return <WechatPreview draft={draft} html={c.html} projectId={projectId} />;
    case "markdown":
      return <ZhihuPreview draft={draft} markdown={c.markdown} projectId={projectId} />;
    case "thread":
      return (
        <ol className="thread" data-testid="preview-x">
          {c.posts.map((p, i) => {
            const over = p.weightedLength > X_LIMIT;
            return (
              <li key={i} className="post" data-testid="x-post">
                <p className="post-text">{p.text}</p>
                <p className={`post-count small ${over ? "over" : "muted"}`} data-testid="x-count" data-over={over}>
                  {p.weightedLength}/{X_LIMIT}
                </p>
              </li>
            );
          })}
        </ol>
      );
    case "card":
      return (
        <article className={`card card-${draft.platform}`} data-testid={`preview-${draft.platform}`}>
          <h1 className="card-title">{draft.title}</h1>
          <p className="card-body">{c.body}</p>
          {!tagsInBody(c) && (
            <p className="card-tags">
              {c.tags.map((x) => (
                <span key={x} className="card-tag">
                  #{x}
                </span>
              ))}
            </p>
          )}
        </article>
      );
  }
}

/** The compiled WeChat HTML as the phone shows it (the article body at 375 px). */
function wechatDoc(html: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=375"><style>body{margin:0;padding:16px 8px;background:#fff}img{max-width:100%}</style></head><body>${html}</body></html>`;
}
