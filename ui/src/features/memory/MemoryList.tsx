// Memory: what the workspace and a project keep across sessions. Items the assistant
// proposed wait for the person (confirm or discard); the person adds, edits and
// deletes their own; habits learnt from accepted work show where they came from and
// can be removed. Used in the AI panel (with a project) and in Settings (workspace).
import { useState } from "react";
import type { MemoryItem, MemoryScopeInput } from "../../shared/api/generated";
import { useMethod, useWrites } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";

export function MemoryList({ projectId }: { projectId?: string }) {
  const { t } = useApp();
  // Read on each showing (a turn may have proposed items since); a write below makes it
  // stale by itself (methods.ts).
  const list = useMethod("memory.list", projectId ? { projectId } : {}, { report: true }).data ?? null;
  const { write } = useWrites();
  const [text, setText] = useState("");
  const [scope, setScope] = useState<MemoryScopeInput>(projectId ? "project" : "workspace");
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);

  const act = async (run: () => Promise<unknown>) => (await run()) !== undefined;
  if (!list) return <p className="small muted pad-x">{t("ai.loading")}</p>;
  const scopeLabel = (m: MemoryItem) => (m.scope.type === "workspace" ? t("ai.memory.workspace") : t("ai.memory.project"));
  return (
    <div className="extras-list memory" data-testid="memory">
      <p className="small muted" data-testid="memory-budget">
        {t("ai.memory.budget", { used: list.usedTokens, budget: list.budgetTokens })}
      </p>
      <ul>
        {list.items.length === 0 && <li className="small muted">{t("ai.memory.none")}</li>}
        {list.items.map((m) => (
          <li key={m.id} className="extras-item" data-testid="memory-item" data-status={m.status}>
            {editing?.id === m.id ? (
              <form
                className="row grow"
                onSubmit={(e) => {
                  e.preventDefault();
                  void act(() => write("memory.update", { memoryId: m.id, text: editing.text })).then((ok) => ok && setEditing(null));
                }}
              >
                <input className="grow" autoFocus data-testid="memory-edit-text" value={editing.text} maxLength={500} onChange={(e) => setEditing({ id: m.id, text: e.target.value })} />
                <button type="submit" className="small-btn primary">
                  {t("common.save")}
                </button>
                <button type="button" className="small-btn" onClick={() => setEditing(null)}>
                  {t("common.cancel")}
                </button>
              </form>
            ) : (
              <>
                <span className="grow">
                  {m.text}
                  <span className="small muted">{` · ${scopeLabel(m)}${m.origin.type === "model" ? ` · ${t("ai.memory.fromAssistant")}` : ""}`}</span>
                </span>
                {m.status === "proposed" && (
                  <button type="button" className="small-btn primary" data-testid="memory-confirm" onClick={() => void act(() => write("memory.confirm", { memoryId: m.id }))}>
                    {t("ai.memory.confirm")}
                  </button>
                )}
                <button type="button" className="small-btn" data-testid="memory-edit" onClick={() => setEditing({ id: m.id, text: m.text })}>
                  {t("common.edit")}
                </button>
                <button
                  type="button"
                  className="icon-btn small-btn"
                  aria-label={m.status === "proposed" ? t("ai.memory.discard") : t("ai.memory.delete")}
                  title={m.status === "proposed" ? t("ai.memory.discard") : t("ai.memory.delete")}
                  data-testid="memory-delete"
                  onClick={() => void act(() => write("memory.delete", { memoryId: m.id }))}
                >
                  ×
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (!text.trim()) return;
          void act(() => write("memory.add", { scope, text, ...(scope === "project" && projectId ? { projectId } : {}) })).then((ok) => ok && setText(""));
        }}
      >
        <input className="grow" data-testid="memory-text" placeholder={t("ai.memory.placeholder")} value={text} maxLength={500} onChange={(e) => setText(e.target.value)} />
        {projectId && (
          <select aria-label={t("ai.memory.scope")} value={scope} onChange={(e) => setScope(e.target.value as MemoryScopeInput)}>
            <option value="project">{t("ai.memory.project")}</option>
            <option value="workspace">{t("ai.memory.workspace")}</option>
          </select>
        )}
        <button type="submit" className="small-btn" data-testid="memory-add">
          {t("ai.memory.add")}
        </button>
      </form>
      <p className="small muted">{t("ai.memory.habits")}</p>
      <ul data-testid="habits">
        {list.habits.length === 0 && <li className="small muted">{t("ai.memory.noHabits")}</li>}
        {list.habits.map((h) => (
          <li key={h.id} className="extras-item" data-testid="habit">
            <span className="grow">
              {t(`ai.memory.habit.${h.kind}` as MessageId)}
              <span className="small muted">{` · ${h.text} · ${t("ai.memory.from", { sources: h.sources.join(", ") })}`}</span>
            </span>
            <button
              type="button"
              className="icon-btn small-btn"
              aria-label={t("ai.memory.removeHabit")}
              title={t("ai.memory.removeHabit")}
              data-testid="habit-remove"
              onClick={() => void act(() => write("memory.dismissHabit", { habitId: h.id }))}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
