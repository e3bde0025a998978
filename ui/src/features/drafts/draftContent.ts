// A saved draft's content as text to edit by hand, and back: the previews' shape, the
// editable text (a thread's posts apart by a separator line) and the content it makes.
import type { Draft, DraftContent, PlatformDraft } from "../../shared/api/generated";

const POST_SEPARATOR = "\n---\n";

/** A saved draft in the shape the previews take. */
export function asDraft(d: PlatformDraft): Draft {
  return { platform: d.platform, profileId: d.profileId, title: d.title, content: d.content, nImages: 0, nLinks: 0 };
}

/** The part of a draft a person edits as text. */
export function editableText(c: DraftContent): string {
  switch (c.type) {
    case "html":
      return c.html;
    case "markdown":
      return c.markdown;
    case "thread":
      return c.posts.map((p) => p.text).join(POST_SEPARATOR);
    case "card":
      return c.body;
  }
}

/** The content with its text (and, for cards, tags) replaced by the edit. */
export function editedContent(c: DraftContent, text: string, tags: string): DraftContent {
  switch (c.type) {
    case "html":
      return { ...c, html: text };
    case "markdown":
      return { ...c, markdown: text };
    case "thread":
      return {
        type: "thread",
        posts: text
          .split(/\n-{3,}\n/)
          .map((p) => p.trim())
          .filter((p) => p.length > 0)
          .map((p) => ({ text: p, weightedLength: 0 })),
      };
    case "card":
      return {
        type: "card",
        body: text,
        tags: tags
          .split(/[,，\s]+/)
          .map((x) => x.replace(/^#/, "").trim())
          .filter((x) => x.length > 0),
      };
  }
}
