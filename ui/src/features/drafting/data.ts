// The drafting panel's calls that are not cached reads or form writes. Asking the
// library is a model call under a request id that Stop cancels: it is sent at once
// (Enter sends it, Stop cancels it in the same event), not queued behind a mutation,
// and it changes no cached read (methods.ts declares search.ask and askCancel so).
import type { ApiClient, ParamsOf, ResultOf } from "../../shared/api/client";

export function askLibrary(client: ApiClient, params: ParamsOf<"search.ask">): Promise<ResultOf<"search.ask">> {
  return client.call("search.ask", params);
}

/** Stops a running question: the engine ends its model call. */
export function cancelAsk(client: ApiClient, requestId: string): Promise<void> {
  return client.call("search.askCancel", { requestId }).then(() => undefined);
}
