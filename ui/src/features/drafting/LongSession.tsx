// What keeps a long session on track, in the AI panel: the session's intent (read from
// the person's messages, editable), the pinned context and its budget (pin, unpin), the
// truncation banner, a compact boundary in the timeline (expandable to its summary),
// and the hard stop of a spent budget (explained, and raisable here).
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import { useMethod, usePutRead, useWrites } from "../../shared/api/query";
import type { Platform, SessionIntent, SessionPins, OutputType, LengthUnit, CompactionSummary } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { MemoryList } from "../memory";
import type { SessionStore } from "./store";
import type { Item } from "./timeline";

const PLATFORMS: Platform[] = ["wechat", "zhihu", "x", "douyin", "xiaohongshu"];
const OUTPUTS: OutputType[] = ["copy", "title_set", "video_script", "strategy_notes", "analysis", "critique"];
const UNITS: LengthUnit[] = ["characters", "words", "seconds"];

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

function intentSummary(t: ReturnType<typeof useApp>["t"], intent: SessionIntent): string {
  const parts: string[] = [];
  const subject = [intent.brand, intent.product, intent.topic].filter(Boolean).join(" · ");
  if (subject) parts.push(subject);
  if (intent.outputType) parts.push(t(`ai.intent.output.${intent.outputType}` as MessageId));
  if (intent.platforms.length) parts.push(intent.platforms.map((p) => t(`platform.${p}` as MessageId)).join("/"));
  if (intent.length) parts.push(`${intent.length.value} ${t(`ai.intent.unit.${intent.length.unit}` as MessageId)}`);
  return parts.join(" · ");
}

function IntentEditor({ value, onSave }: { value: SessionIntent; onSave: (next: SessionIntent) => Promise<void> }) {
  const { t } = useApp();
  const [brand, setBrand] = useState(value.brand ?? "");
  const [product, setProduct] = useState(value.product ?? "");
  const [topic, setTopic] = useState(value.topic ?? "");
  const [output, setOutput] = useState<OutputType | "">(value.outputType ?? "");
  const [platforms, setPlatforms] = useState<Platform[]>(value.platforms);
  const [length, setLength] = useState(value.length ? String(value.length.value) : "");
  const [unit, setUnit] = useState<LengthUnit>(value.length?.unit ?? "characters");
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    const n = Number.parseInt(length, 10);
    const next: SessionIntent = {
      platforms,
      ...(brand.trim() ? { brand: brand.trim() } : {}),
      ...(product.trim() ? { product: product.trim() } : {}),
      ...(topic.trim() ? { topic: topic.trim() } : {}),
      ...(output ? { outputType: output } : {}),
      ...(n > 0 ? { length: { value: n, unit } } : {}),
    };
    await onSave(next);
    setBusy(false);
  };
  const field = (id: string, label: MessageId, v: string, set: (s: string) => void) => (
    <label className="small">
      {t(label)}
      <input data-testid={`intent-${id}`} value={v} maxLength={200} onChange={(e) => set(e.target.value)} />
    </label>
  );
  return (
    <form
      className="extras-list intent-editor"
      data-testid="intent-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <p className="small muted">{t("ai.intent.help")}</p>
      {field("brand", "ai.intent.brand", brand, setBrand)}
      {field("product", "ai.intent.product", product, setProduct)}
      {field("topic", "ai.intent.topic", topic, setTopic)}
      <label className="small">
        {t("ai.intent.output")}
        <select data-testid="intent-output" value={output} onChange={(e) => setOutput(e.target.value as OutputType | "")}>
          <option value="">—</option>
          {OUTPUTS.map((o) => (
            <option key={o} value={o}>
              {t(`ai.intent.output.${o}` as MessageId)}
            </option>
          ))}
        </select>
      </label>
      <fieldset className="small">
        <legend>{t("ai.intent.platforms")}</legend>
        {PLATFORMS.map((p) => (
          <label key={p} className="check">
            <input type="checkbox" checked={platforms.includes(p)} onChange={(e) => setPlatforms((ps) => (e.target.checked ? PLATFORMS.filter((x) => x === p || ps.includes(x)) : ps.filter((x) => x !== p)))} />
            {t(`platform.${p}` as MessageId)}
          </label>
        ))}
      </fieldset>
      <label className="small">
        {t("ai.intent.length")}
        <span className="row">
          <input data-testid="intent-length" inputMode="numeric" value={length} onChange={(e) => setLength(e.target.value.replace(/\D/g, ""))} />
          <select value={unit} onChange={(e) => setUnit(e.target.value as LengthUnit)}>
            {UNITS.map((u) => (
              <option key={u} value={u}>
                {t(`ai.intent.unit.${u}` as MessageId)}
              </option>
            ))}
          </select>
        </span>
      </label>
      <button type="submit" className="small-btn primary" disabled={busy} data-testid="intent-save">
        {t("common.save")}
      </button>
    </form>
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

/** The summary's heading line, written for the model (the toggle above says it). */
const SUMMARY_HEADING = /^# Earlier conversation[^\n]*\n/;

/** A compaction summary in the person's language, part by part, in normal type. */
function SummaryParts({ summary }: { summary: CompactionSummary }) {
  const { t } = useApp();
  const list = (label: MessageId, items: string[]) =>
    items.length > 0 && (
      <>
        <dt>{t(label)}</dt>
        <dd>
          <ul>
            {items.map((x, i) => (
              <li key={i}>{x}</li>
            ))}
          </ul>
        </dd>
      </>
    );
  const line = (label: MessageId, text: string) =>
    text.trim() && (
      <>
        <dt>{t(label)}</dt>
        <dd>{text.trim()}</dd>
      </>
    );
  return (
    <dl className="boundary-parts">
      {line("ai.summary.summary", summary.summary)}
      {line("ai.summary.intent", summary.user_intent)}
      {list(
        "ai.summary.accepted",
        summary.accepted_changes.map((c) => (c.version ? t("ai.summary.acceptedVersion", { id: c.proposal_id, n: c.version }) : c.proposal_id)),
      )}
      {list(
        "ai.summary.rejected",
        summary.rejected_directions.map((r) => t("ai.summary.rejectedReason", { direction: r.direction, reason: r.reason })),
      )}
      {list("ai.summary.open", summary.open_tasks)}
      {list("ai.summary.artifacts", summary.active_artifacts)}
      {list("ai.summary.sources", summary.source_refs)}
      {line("ai.summary.next", summary.next_step_hint)}
    </dl>
  );
}

/** A compact boundary in the timeline: one line, expandable to the summary. */
export function BoundaryLine({ item }: { item: Extract<Item, { kind: "boundary" }> }) {
  const { t } = useApp();
  const [open, setOpen] = useState(false);
  const truncated = item.mode === "truncated";
  return (
    <div className={`line ${truncated ? "line-warn" : "muted"}`} data-testid="compact-boundary" data-mode={item.mode}>
      <button type="button" className="link-btn" aria-expanded={open} data-testid="compact-boundary-toggle" onClick={() => setOpen((o) => !o)}>
        {truncated ? t("ai.long.boundaryTruncated", { n: item.compacted }) : t("ai.long.boundary", { n: item.compacted })}
      </button>
      <span className="small muted">{` · ${t("ai.long.tokens", { before: item.tokensBefore, after: item.tokensAfter })}`}</span>
      {open && (
        <div className="small boundary-summary" data-testid="compact-boundary-summary">
          {!truncated && item.summary ? <SummaryParts summary={item.summary} /> : truncated ? `${item.note}\n\n${item.summaryText}` : item.summaryText.replace(SUMMARY_HEADING, "")}
        </div>
      )}
    </div>
  );
}

/** A spent budget: what stopped, and raising the session's or the project's budget here. */
export function BudgetStop({ store }: { store: SessionStore }) {
  const { t } = useApp();
  const [tokens, setTokens] = useState("");
  const projectId = useSyncExternalStore(store.subscribe, store.getSnapshot).session.projectId;
  // Both budgets are shown together, once both are read; raising one answers with it.
  const sessionRead = useMethod("session.budget", { sessionId: store.id });
  const projectRead = useMethod("project.budget", { projectId });
  const { write, pending: busy } = useWrites();
  const put = usePutRead();
  const session = sessionRead.data;
  const project = projectRead.data;
  if (!session || !project) return null;
  const which = project.exceeded ? project : session;
  const raise = async () => {
    const n = Number.parseInt(tokens, 10);
    if (!(n > 0)) return;
    const budget = { tokenBudget: n, ...(which.costBudget ? { costBudget: which.costBudget } : {}) };
    if (project.exceeded) {
      const now = await write("project.setBudget", { projectId, budget });
      if (!now) return;
      await put("project.budget", { projectId }, now);
    } else {
      const now = await write("session.setBudget", { sessionId: store.id, budget });
      if (!now) return;
      await put("session.budget", { sessionId: store.id }, now);
    }
    void store.load();
  };
  return (
    <div className="budget-stop" data-testid="budget-stop">
      <p className="small">
        {t(project.exceeded ? "ai.budget.project" : "ai.budget.session", {
          spent: which.spent.tokens,
          budget: which.tokenBudget ?? 0,
          cost: which.spent.cost.toFixed(4),
        })}
      </p>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void raise();
        }}
      >
        <label className="small">
          {t("ai.budget.newTokens")}
          <input data-testid="budget-tokens" inputMode="numeric" value={tokens} onChange={(e) => setTokens(e.target.value.replace(/\D/g, ""))} />
        </label>
        <button type="submit" className="small-btn primary" disabled={busy || !tokens} data-testid="budget-raise">
          {t("ai.budget.raise")}
        </button>
      </form>
    </div>
  );
}
