// The session's intent (brand, product, topic, output, platforms, length), in a line and
// as the form that edits it.
import { useState } from "react";
import type { LengthUnit, OutputType, Platform, SessionIntent } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";

const PLATFORMS: Platform[] = ["wechat", "zhihu", "x", "douyin", "xiaohongshu"];
const OUTPUTS: OutputType[] = ["copy", "title_set", "video_script", "strategy_notes", "analysis", "critique"];
const UNITS: LengthUnit[] = ["characters", "words", "seconds"];

export function intentSummary(t: ReturnType<typeof useApp>["t"], intent: SessionIntent): string {
  const parts: string[] = [];
  const subject = [intent.brand, intent.product, intent.topic].filter(Boolean).join(" · ");
  if (subject) parts.push(subject);
  if (intent.outputType) parts.push(t(`ai.intent.output.${intent.outputType}` as MessageId));
  if (intent.platforms.length) parts.push(intent.platforms.map((p) => t(`platform.${p}` as MessageId)).join("/"));
  if (intent.length) parts.push(`${intent.length.value} ${t(`ai.intent.unit.${intent.length.unit}` as MessageId)}`);
  return parts.join(" · ");
}

export function IntentEditor({ value, onSave }: { value: SessionIntent; onSave: (next: SessionIntent) => Promise<void> }) {
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
