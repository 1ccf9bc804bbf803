// A button whose action is asked about first (revoke, suspend, close): a modal dialog saying what
// will happen, the API's error shown inside it when the call fails, focus back on the button (or
// the page's heading when the button went away with the change).
import { type ReactNode, useState } from 'react';
import { type ShownError, shownError } from '../api.ts';
import { Button } from './Button.tsx';
import { closeDialogOf, Dialog } from './Dialog.tsx';
import { ErrorMessage } from './ErrorMessage.tsx';

interface Props {
  /** The button's text. */
  label: string;
  /** A longer accessible name when several such buttons share a page (e.g. one per table row). */
  ariaLabel?: string;
  title: string;
  /** What will happen, in a sentence or two. */
  children: ReactNode;
  confirmLabel: string;
  variant?: 'secondary' | 'danger';
  onConfirm: () => Promise<void>;
}

export function ConfirmButton({
  label,
  ariaLabel,
  title,
  children,
  confirmLabel,
  variant = 'secondary',
  onConfirm,
}: Props) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);

  return (
    <>
      <Button variant={variant} aria-label={ariaLabel} onClick={() => setOpen(true)}>
        {label}
      </Button>
      {open ? (
        <Dialog
          title={title}
          busy={busy}
          onClose={() => {
            setOpen(false);
            setError(null);
          }}
        >
          <div className="dialog-body">{children}</div>
          <ErrorMessage error={error} />
          <div className="dialog-actions">
            <Button
              variant={variant === 'danger' ? 'danger' : 'primary'}
              busy={busy}
              onClick={async (event) => {
                const button = event.currentTarget;
                setBusy(true);
                setError(null);
                try {
                  await onConfirm();
                  setBusy(false);
                  closeDialogOf(button);
                } catch (err) {
                  setError(shownError(err));
                  setBusy(false);
                }
              }}
            >
              {confirmLabel}
            </Button>
            <Button disabled={busy} onClick={(e) => closeDialogOf(e.currentTarget)}>
              Cancel
            </Button>
          </div>
        </Dialog>
      ) : null}
    </>
  );
}
