// The library sections of the settings (brand profiles, templates) share one shape: a
// list with edit and delete, and a form for a new or an existing record. This is that
// shape; each section says which fields its form has and which API methods it calls.

import { type ReactNode, useState } from "react";
import { useApp } from "../../shared/context";
import { DeleteButton } from "./DeleteButton";

/** A record of the library: named, with an id. */
interface LibraryRecord {
  id: string;
  name: string;
}

/** The form's text fields; `name` comes first and must not be blank. */
type LibraryForm = { name: string } & Record<string, string>;

export interface LibraryField<F extends LibraryForm> {
  key: Exclude<keyof F, "name"> & string;
  label: string;
  testId?: string;
  /** A multi-line field of this many rows; a one-line input without it. */
  rows?: number;
}

export interface LibraryProps<T extends LibraryRecord, F extends LibraryForm> {
  /** Prefix of the section's test ids (`<kind>-list`, `<kind>-form`, `<kind>-name`, ...). */
  kind: string;
  items: T[];
  help: string;
  empty: string;
  newLabel: string;
  fields: LibraryField<F>[];
  /** The form's values for a record, or for a new one. */
  toForm: (item: T | null) => F;
  /** The muted text after a record's name in the list. */
  subtitle: (item: T) => string;
  /** Creates a record from the form (`item` null) or updates `item` with it. */
  /** Resolves to `undefined` when the write failed (and the failure was shown). */
  save: (form: F, item: T | null) => Promise<unknown>;
  remove: (item: T) => Promise<unknown>;
  onChanged: () => void;
  /** Actions shown before Edit in a record's row. */
  actions?: (item: T) => ReactNode;
}

export function Library<T extends LibraryRecord, F extends LibraryForm>(props: LibraryProps<T, F>) {
  const { kind, fields } = props;
  const { t, toast } = useApp();
  const [editing, setEditing] = useState<T | "new" | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [form, setForm] = useState<F>(() => props.toForm(null));
  const start = (item: T | "new") => {
    setEditing(item);
    setForm(props.toForm(item === "new" ? null : item));
  };
  const set = (key: keyof F, value: string) => setForm((f) => ({ ...f, [key]: value }));
  // A failed write has been shown already (the data layer's one error path).
  const save = async () => {
    if (!editing) return;
    if ((await props.save(form, editing === "new" ? null : editing)) === undefined) return;
    setEditing(null);
    props.onChanged();
    toast(t("common.saved"));
  };
  const remove = async (item: T) => {
    setDeleting(null);
    if ((await props.remove(item)) === undefined) return;
    props.onChanged();
  };
  if (editing) {
    return (
      <div className="form" data-testid={`${kind}-form`}>
        <label className="field">
          <span className="small muted">{t("library.name")}</span>
          <input data-testid={`${kind}-name`} value={form.name} onChange={(e) => set("name", e.target.value)} />
        </label>
        {fields.map((field) => (
          <label key={field.key} className="field">
            <span className="small muted">{field.label}</span>
            {field.rows ? (
              <textarea data-testid={field.testId} rows={field.rows} value={form[field.key]} onChange={(e) => set(field.key, e.target.value)} />
            ) : (
              <input data-testid={field.testId} value={form[field.key]} onChange={(e) => set(field.key, e.target.value)} />
            )}
          </label>
        ))}
        <div className="row end">
          <button type="button" onClick={() => setEditing(null)}>
            {t("common.cancel")}
          </button>
          <button type="button" className="primary" data-testid={`${kind}-save`} disabled={!form.name.trim()} onClick={() => void save()}>
            {t("common.save")}
          </button>
        </div>
      </div>
    );
  }
  return (
    <div className="form">
      <p className="small muted">{props.help}</p>
      <ul className="plain-list" data-testid={`${kind}-list`}>
        {props.items.map((item) => (
          <li key={item.id} className="row between">
            <span>
              <strong>{item.name}</strong> <span className="small muted">{props.subtitle(item)}</span>
            </span>
            <span>
              {props.actions?.(item)}
              <button type="button" className="link" onClick={() => start(item)}>
                {t("common.edit")}
              </button>
              <DeleteButton
                name={item.name}
                asking={deleting === item.id}
                onAsk={() => setDeleting(item.id)}
                onCancel={() => setDeleting(null)}
                onConfirm={() => void remove(item)}
              />
            </span>
          </li>
        ))}
      </ul>
      {props.items.length === 0 && <p className="muted small">{props.empty}</p>}
      <div>
        <button type="button" data-testid={`${kind}-new`} onClick={() => start("new")}>
          + {props.newLabel}
        </button>
      </div>
    </div>
  );
}
