// What keeps a long session on track, in the AI panel: the session's intent (read from
// the person's messages, editable), the pinned context and its budget (pin, unpin), the
// memory and the truncation banner. The timeline's marks of a long session (a compact
// boundary, the hard stop of a spent budget) are in ./BoundaryLine.tsx.
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import { useMethod, usePutRead, useWrites } from "../../shared/api/query";
import type { SessionPins } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { MemoryList } from "../memory";
import type { SessionStore } from "./store";
import { IntentEditor, intentSummary } from "./IntentEditor";


type Open = "intent" | "pins" | "memory" | null;

/** The bar above the timeline: intent, pins and memory toggles, and the truncation banner. */
export function LongSessionBar({ store }: { store: SessionStore }) {
  const { t } = useApp();
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const [open, setOpen] = useState<Open>(null);
  const seq = snap.timeline.longSessionSeq;
  const sessionId = store.id;
  // Read again when the log says either changed (`longSessionSeq`); a write below answers
  // with the new state, which goes straight into the cache.
  const intentRead = useMethod("session.intent", { sessionId });
  const pinsRead = useMethod("session.pins", { sessionId });
  const intent = intentRead.data ?? null;
  const pins = pinsRead.data ?? null;
  const [refetchIntent, refetchPins] = [intentRead.refetch, pinsRead.refetch];
  const readSeq = useRef(seq);
  useEffect(() => {
    if (readSeq.current === seq) return;
    readSeq.current = seq;
    void refetchIntent();
    void refetchPins();
  }, [seq, refetchIntent, refetchPins]);
  const { write } = useWrites();
  const put = usePutRead();

  const toggle = (which: Open) => setOpen((o) => (o === which ? null : which));
  const summary = intent ? intentSummary(t, intent.intent) : "";
  const clarify = intent?.clarification ? t("ai.intent.clarify", { what: intent.clarification.missing.map((m) => t(`ai.intent.missing.${m}` as MessageId)).join(t("ai.intent.and")) }) : null;
  return (
    <div className="extras long-session" data-testid="long-session">
      {snap.timeline.truncated && (
        <div className="line line-warn" role="status" data-testid="truncation-banner">
          {t("ai.long.truncated")}
        </div>
      )}
      <div className="extras-bar">
        {/* What the assistant will first ask is said inside the intent chip (cut with it,
            whole in its title), not on a line of its own: it arrives after the panel
            opens, and a new line would push the conversation down. */}
        <button
          type="button"
          className="small-btn intent-chip"
          aria-expanded={open === "intent"}
          data-testid="intent-toggle"
          title={[summary ? t("ai.intent.short", { summary }) : clarify ? t("ai.intent.none") : "", clarify ?? ""].filter(Boolean).join(" · ") || undefined}
          onClick={() => toggle("intent")}
        >
          {summary ? t("ai.intent.short", { summary }) : t("ai.intent.none")}
          {clarify && (
            <span className="line-warn" data-testid="intent-clarify">
              {" · "}
              {clarify}
            </span>
          )}
        </button>
        <button type="button" className={pins && !pins.pinsFit ? "small-btn line-warn" : "small-btn"} aria-expanded={open === "pins"} data-testid="pins-toggle" onClick={() => toggle("pins")}>
          {t("ai.pins.title", { n: pins?.pins.length ?? 0, pct: pins?.pinnedPercent ?? 0 })}
        </button>
        <button type="button" className="small-btn" aria-expanded={open === "memory"} data-testid="memory-toggle" onClick={() => toggle("memory")}>
          {t("ai.memory.title")}
        </button>
      </div>
      {open === "intent" && intent && (
        <IntentEditor
          key={seq}
          value={intent.intent}
          onSave={async (next) => {
            const now = await write("session.setIntent", { sessionId, intent: next });
            if (!now) return;
            await put("session.intent", { sessionId }, now);
            setOpen(null);
          }}
        />
      )}
      {open === "pins" && pins && (
        <PinList
          pins={pins}
          onPin={async (text) => {
            const now = await write("session.pin", { sessionId, text });
            if (now) await put("session.pins", { sessionId }, now);
            return now !== undefined;
          }}
          onUnpin={async (pinId) => {
            const now = await write("session.unpin", { sessionId, pinId });
            if (now) await put("session.pins", { sessionId }, now);
          }}
        />
      )}
      {open === "memory" && <MemoryList projectId={snap.session.projectId} />}
    </div>
  );
}

function PinList({ pins, onPin, onUnpin }: { pins: SessionPins; onPin: (text: string) => Promise<boolean>; onUnpin: (id: string) => Promise<void> }) {
  const { t } = useApp();
  const [text, setText] = useState("");
  return (
    <ul className="extras-list" data-testid="pins">
      <li className="small muted" data-testid="pins-budget">
        {t("ai.pins.budget", { tokens: pins.pinnedTokens, window: pins.contextWindow, pct: pins.pinnedPercent })}
      </li>
      {!pins.pinsFit && (
        <li className="small line-warn" role="alert" data-testid="pins-over">
          {t("ai.pins.over", { tokens: pins.pinsTokens, budget: pins.pinBudgetTokens })}
        </li>
      )}
      {pins.pins.length === 0 && <li className="small muted">{t("ai.pins.none")}</li>}
      {pins.pins.map((p) => (
        <li key={p.id} className="extras-item" data-testid="pin">
          <span className="grow">
            {p.text}
            {p.source === "instruction" && <span className="small muted">{` · ${t("ai.pins.instruction")}`}</span>}
          </span>
          <button type="button" className="icon-btn small-btn" aria-label={t("ai.pins.unpin")} title={t("ai.pins.unpin")} data-testid="pin-remove" onClick={() => void onUnpin(p.id)}>
            ×
          </button>
        </li>
      ))}
      <li>
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (!text.trim()) return;
            void onPin(text).then((ok) => ok && setText(""));
          }}
        >
          <input className="grow" data-testid="pin-text" placeholder={t("ai.pins.placeholder")} value={text} maxLength={4000} onChange={(e) => setText(e.target.value)} />
          <button type="submit" className="small-btn" data-testid="pin-add">
            {t("ai.pins.add")}
          </button>
        </form>
      </li>
      <li className="small muted">{t("ai.pins.help")}</li>
    </ul>
  );
}
