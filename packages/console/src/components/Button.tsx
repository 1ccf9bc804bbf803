// Buttons: one look per intent; a busy button stays focusable and says so (aria-busy).
import type { ButtonHTMLAttributes } from 'react';

interface Props extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: 'primary' | 'secondary' | 'danger' | 'quiet';
  busy?: boolean;
}

export function Button({ variant = 'secondary', busy = false, type = 'button', className, ...rest }: Props) {
  return (
    <button
      type={type}
      className={`btn btn-${variant}${className ? ` ${className}` : ''}`}
      aria-busy={busy || undefined}
      disabled={rest.disabled || busy}
      {...rest}
    />
  );
}
