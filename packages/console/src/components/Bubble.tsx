// A WhatsApp-style chat bubble: the customer's messages on the left, the business's on the right
// with their status ticks (sent ✓, delivered ✓✓, read ✓✓ in blue, failed with its reason). Also
// the template preview's bubble (header, body, footer, buttons).
import type { ReactNode } from 'react';
import { shortWhen } from './format.ts';

export type BubbleStatus =
  | 'scheduled'
  | 'queued'
  | 'sent'
  | 'delivered'
  | 'read'
  | 'failed'
  | 'canceled'
  | 'received';

const STATUS_TEXT: Record<BubbleStatus, string> = {
  scheduled: 'Scheduled',
  queued: 'Queued',
  sent: 'Sent',
  delivered: 'Delivered',
  read: 'Read',
  failed: 'Failed',
  canceled: 'Canceled',
  received: 'Received',
};

function Ticks({ status }: { status: BubbleStatus }) {
  const marks =
    status === 'queued' || status === 'scheduled'
      ? '🕓'
      : status === 'sent'
        ? '✓'
        : status === 'failed' || status === 'canceled'
          ? '!'
          : '✓✓';
  return (
    <span className={`ticks ticks-${status}`} title={STATUS_TEXT[status]}>
      <span aria-hidden="true">{marks}</span>
      <span className="visually-hidden">{STATUS_TEXT[status]}</span>
    </span>
  );
}

interface Props {
  direction: 'inbound' | 'outbound';
  status?: BubbleStatus;
  at?: string | null;
  header?: ReactNode;
  footer?: ReactNode;
  buttons?: string[];
  /** Failed: the provider's or API's reason. */
  error?: string | null;
  children: ReactNode;
}

export function Bubble({ direction, status, at, header, footer, buttons, error, children }: Props) {
  return (
    <div className={`bubble bubble-${direction}`} data-status={status}>
      {header ? <p className="bubble-header">{header}</p> : null}
      <div className="bubble-body">{children}</div>
      {footer ? <p className="bubble-footer">{footer}</p> : null}
      {buttons && buttons.length > 0 ? (
        <ul className="bubble-buttons">
          {buttons.map((b, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: labels may repeat while being typed
            <li key={i}>{b}</li>
          ))}
        </ul>
      ) : null}
      <p className="bubble-meta">
        {at ? <time dateTime={at}>{shortWhen(at)}</time> : null}
        {direction === 'outbound' && status ? <Ticks status={status} /> : null}
      </p>
      {status === 'failed' && error ? <p className="bubble-error">Failed: {error}</p> : null}
    </div>
  );
}
