// A proposal that is not a text diff: candidates to choose from (one title, several
// tags), an outline, a comment reply, a checklist or a metadata change.
import type { ProposalView } from "../../shared/api/generated";
import { useApp } from "../../shared/context";

export function Candidates({ view, open, choices, onChoices }: { view: ProposalView; open: boolean; choices: string[]; onChoices: (update: (list: string[]) => string[]) => void }) {
  const { t } = useApp();
  if (view.payload.type !== "candidates") return null;
  const single = view.kind === "title_candidates";
  return (
    <fieldset className="candidates" data-testid="candidates">
      <legend>{single ? t("ai.review.pickTitle") : t("ai.review.pickTags")}</legend>
      {view.payload.candidates.map((c) => (
        <label key={c.text} className="candidate">
          <input
            type={single ? "radio" : "checkbox"}
            name="candidate"
            disabled={!open}
            checked={choices.includes(c.text) || view.applied?.choices?.includes(c.text) === true}
            onChange={(e) => onChoices((list) => (single ? [c.text] : e.target.checked ? [...list, c.text] : list.filter((x) => x !== c.text)))}
          />
          <span>
            {c.text}
            {c.rationale && <span className="small muted">{` — ${c.rationale}`}</span>}
          </span>
        </label>
      ))}
    </fieldset>
  );
}

/** An outline, a comment reply, a checklist or a metadata change, shown as it is. */
export function PlainPayload({ view }: { view: ProposalView }) {
  const payload = view.payload;
  switch (payload.type) {
    case "outline":
      return <pre className="review-text">{payload.outline}</pre>;
    case "commentReply":
      return <p className="review-text">{payload.body}</p>;
    case "checklist":
      return (
        <ul className="review-text">
          {payload.items.map((item) => (
            <li key={item.id}>
              {item.blocking ? "⚠ " : ""}
              {item.text}
            </li>
          ))}
        </ul>
      );
    case "metadata":
      return <pre className="review-text">{JSON.stringify(payload.change, null, 2)}</pre>;
    default:
      return null;
  }
}
