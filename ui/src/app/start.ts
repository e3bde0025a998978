// The window's API client and its first read, made by the entry (main.tsx) before the
// app's code has loaded: the project list is the first screen, and its call (which may
// wait for the store to open) then overlaps the fetch and parse of that code and of the
// catalog. App takes the promise for its first read of the list (`firstProjects`). The
// desktop shell puts that list into index.html itself (see `inlinedProjects`), so there the
// list is at hand before the document's first frame and no call is made.
import { ApiClient, createDefaultTransport, type ResultOf } from "../shared/api/client";

/** The first project list the desktop shell put into index.html (a JSON island), if it
 * did and it has the list's shape: read synchronously, so the entry paints the list in
 * the document's first frame. */
export function inlinedProjects(doc: Document = document): ResultOf<"project.list"> | undefined {
  const text = doc.getElementById("first-projects")?.textContent;
  if (!text) return undefined;
  try {
    const list = JSON.parse(text) as ResultOf<"project.list">;
    return Array.isArray(list?.projects) ? list : undefined;
  } catch {
    return undefined;
  }
}

export function startClient(): { client: ApiClient; firstProjects: Promise<ResultOf<"project.list">> } {
  const client = new ApiClient(createDefaultTransport());
  const inlined = inlinedProjects();
  const firstProjects = inlined ? Promise.resolve(inlined) : client.call("project.list", { includeArchived: true });
  // A failure is App's to show: it reads the list again and shows that error.
  firstProjects.catch(() => undefined);
  return { client, firstProjects };
}
