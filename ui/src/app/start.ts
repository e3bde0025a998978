// The window's API client and its first read, made by the entry (main.tsx) before the
// app's code has loaded: the project list is the first screen, and its call (which may
// wait for the store to open) then overlaps the fetch and parse of that code and of the
// catalog. App takes the promise for its first read of the list (`firstProjects`).
import { ApiClient, createDefaultTransport, type ResultOf } from "../shared/api/client";

export function startClient(): { client: ApiClient; firstProjects: Promise<ResultOf<"project.list">> } {
  const client = new ApiClient(createDefaultTransport());
  const firstProjects = client.call("project.list", { includeArchived: true });
  // A failure is App's to show: it reads the list again and shows that error.
  firstProjects.catch(() => undefined);
  return { client, firstProjects };
}
