// Suggestions under a textarea (the `/` canned responses, the `@` mentions): a listbox the
// textarea points at with aria-controls and aria-activedescendant, so a screen reader follows the
// arrow keys while the focus stays in the text; Enter or a click picks, Escape closes.
import type { KeyboardEvent } from 'react';

export interface Suggestion {
  id: string;
  label: string;
  hint?: string;
}

interface Props {
  id: string;
  label: string;
  items: Suggestion[];
  active: number;
  onPick: (item: Suggestion) => void;
}

export function SuggestionList({ id, label, items, active, onPick }: Props) {
  if (items.length === 0) return null;
  return (
    <div className="suggestions" role="listbox" id={id} aria-label={label}>
      {items.map((item, i) => (
        // biome-ignore lint/a11y/useKeyWithClickEvents: the textarea's arrow keys and Enter pick (aria-activedescendant)
        <div
          key={item.id}
          id={`${id}-${i}`}
          role="option"
          tabIndex={-1}
          aria-selected={i === active}
          className={i === active ? 'active' : undefined}
          // Keep the focus in the textarea.
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => onPick(item)}
        >
          <span className="suggestion-label">{item.label}</span>
          {item.hint ? <span className="suggestion-hint">{item.hint}</span> : null}
        </div>
      ))}
    </div>
  );
}

/**
 * The textarea's side of the listbox: its ARIA attributes, and a keydown handler that moves
 * through the items and picks one (true: the key was the list's).
 */
export function suggestionKeys(
  id: string,
  items: Suggestion[],
  active: number,
  setActive: (n: number) => void,
  onPick: (item: Suggestion) => void,
  onClose: () => void,
) {
  const open = items.length > 0;
  return {
    'aria-autocomplete': 'list' as const,
    'aria-controls': open ? id : undefined,
    'aria-activedescendant': open ? `${id}-${Math.min(active, items.length - 1)}` : undefined,
    onKeyDown: (e: KeyboardEvent<HTMLTextAreaElement>) => {
      if (!open) return;
      if (e.key === 'ArrowDown') setActive((active + 1) % items.length);
      else if (e.key === 'ArrowUp') setActive((active - 1 + items.length) % items.length);
      else if (e.key === 'Enter' && !e.shiftKey) onPick(items[Math.min(active, items.length - 1)]!);
      else if (e.key === 'Escape') onClose();
      else return;
      e.preventDefault();
    },
  };
}
