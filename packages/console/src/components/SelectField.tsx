// A labelled <select> with its hint, like Field for inputs.
import { type SelectHTMLAttributes, useId } from 'react';

interface Props extends SelectHTMLAttributes<HTMLSelectElement> {
  label: string;
  hint?: string;
  options: { value: string; label: string }[];
}

export function SelectField({ label, hint, options, id, ...select }: Props) {
  const own = useId();
  const selectId = id ?? own;
  const hintId = hint ? `${selectId}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={selectId}>{label}</label>
      {hint ? (
        <p className="field-hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      <select id={selectId} aria-describedby={hintId} {...select}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}
