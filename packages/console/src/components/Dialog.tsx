// A modal dialog on the native <dialog> (showModal: focus moves in and stays in, Escape closes, the
// page behind is inert). On closing, focus goes back to what opened it, or, when that is gone (a
// revoked key's button), to the page's heading, so keyboard users are never dropped at the top.
import { type ReactNode, useEffect, useId, useRef } from 'react';
import './pieces.css';

interface Props {
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** While true, Escape does not close it (a call is under way). */
  busy?: boolean;
  /** Where focus goes when nothing usable opened it (a form's submit button, disabled while busy). */
  returnTo?: () => Element | null | undefined;
}

/** Focus after a dialog: its opener when it is still there and usable, else the page's heading. */
export function restoreFocus(opener: Element | null, fallback?: Element | null): void {
  for (const target of [opener, fallback]) {
    if (
      target instanceof HTMLElement &&
      target !== document.body &&
      target.isConnected &&
      !target.hasAttribute('disabled')
    ) {
      target.focus();
      return;
    }
  }
  document.getElementById('page-title')?.focus();
}

/** Open while mounted: render it when there is something to show, drop it in onClose. */
export function Dialog({ title, onClose, children, busy = false, returnTo }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<Element | null>(null);
  const titleId = useId();
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  const returnRef = useRef(returnTo);
  returnRef.current = returnTo;

  useEffect(() => {
    const dialog = ref.current!;
    const back = () => restoreFocus(opener.current, returnRef.current?.());
    if (!dialog.open) {
      opener.current = document.activeElement;
      dialog.showModal();
    }
    const closed = () => {
      closeRef.current();
      // After React has re-rendered the page (the opener may be gone or replaced).
      setTimeout(back, 0);
    };
    dialog.addEventListener('close', closed);
    return () => {
      dialog.removeEventListener('close', closed);
      // Unmounted by the change it confirmed (an account closed takes its buttons away): focus
      // would be lost on <body>, so it goes where it would have gone.
      setTimeout(() => {
        const focused = document.activeElement;
        if (!focused || focused === document.body) back();
      }, 0);
    };
  }, []);

  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        if (busy) event.preventDefault();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}

/** Closes the dialog this element is in (its `close` event then reaches onClose). */
export function closeDialogOf(element: Element | null): void {
  element?.closest('dialog')?.close();
}
