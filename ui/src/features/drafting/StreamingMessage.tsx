// The end of the timeline while a turn runs: the answer streaming in (it subscribes to the
// stream itself, so only it re-renders), compacting with its Stop, reconnecting, or
// working, each with the seconds it has taken so far.
import { useEffect, useState, useSyncExternalStore } from "react";
import { useApp } from "../../shared/context";
import { StreamingMarkdown } from "./Markdown";
import type { SessionStore } from "./store";

/** Seconds since `running` last became true, counting every second while it stays so
 * (a local model can take minutes: the person sees that it is still going). */
function useElapsedSeconds(running: boolean): number {
  const { now } = useApp();
  const [started, setStarted] = useState<number | null>(null);
  const [tick, setTick] = useState(0);
  if (running && started === null) setStarted(now());
  if (!running && started !== null) setStarted(null);
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, [running]);
  void tick;
  return started === null ? 0 : Math.max(0, Math.floor((now() - started) / 1000));
}

function Elapsed({ seconds }: { seconds: number }) {
  const { t } = useApp();
  return (
    <span className="small muted elapsed" data-testid="turn-elapsed">
      {" "}
      {t("ai.elapsed", { s: seconds })}
    </span>
  );
}

export function StreamingMessage({
  store,
  running,
  following,
  reconnecting,
  compacting,
}: {
  store: SessionStore;
  running: boolean;
  following: boolean;
  reconnecting: boolean;
  compacting: boolean;
}) {
  const { t } = useApp();
  const streaming = useSyncExternalStore(store.subscribeStream, store.getStreaming);
  const elapsed = useElapsedSeconds(running);
  if (compacting && !reconnecting) {
    // Summarising can take a while with a local model: say what runs, and offer Stop here.
    return (
      <div className="line muted working compacting" role="status" data-testid="compacting">
        <span className="spinner" aria-hidden="true" /> {t("ai.compacting")}
        <Elapsed seconds={elapsed} />
        <button type="button" className="small-btn" data-testid="compacting-stop" onClick={() => void store.interrupt()}>
          {t("ai.stop")}
        </button>
      </div>
    );
  }
  if (streaming && (streaming.text || streaming.reasoning)) {
    return (
      <div className="msg msg-assistant msg-live" data-testid="live-message" aria-live="off">
        {streaming.reasoning && !streaming.text && <p className="small muted">{t("ai.thinking")}</p>}
        <StreamingMarkdown text={streaming.text} />
        {running && (
          <p className="small muted">
            <Elapsed seconds={elapsed} />
          </p>
        )}
      </div>
    );
  }
  if (!running) return null;
  if (reconnecting) {
    return (
      <p className="line muted working" role="status" data-testid="reconnecting">
        <span className="spinner" aria-hidden="true" /> {t("ai.reconnecting")}
      </p>
    );
  }
  return (
    <p className="line muted working" role="status" data-testid="working">
      <span className="spinner" aria-hidden="true" /> {following ? t("ai.workingElsewhere") : t("ai.working")}
      <Elapsed seconds={elapsed} />
    </p>
  );
}
