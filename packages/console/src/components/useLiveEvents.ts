// The account's events as they happen (GET /events/stream through the SDK, which sends the session
// cookie, and X-Account-Id for a partner admin, as every call does). The SDK reconnects after a
// dropped connection with Last-Event-ID, so nothing is missed; `state` says whether it is live.
import type { Tidings, WebhookEvent } from '@tidings/sdk';
import { useEffect, useRef, useState } from 'react';
import { type ShownError, shownError } from '../api.ts';

export type LiveState = 'connecting' | 'live' | 'failed';

export function useLiveEvents(
  api: Tidings,
  types: string,
  onEvent: (event: WebhookEvent) => void,
): { state: LiveState; error: ShownError | null } {
  const [state, setState] = useState<LiveState>('connecting');
  const [error, setError] = useState<ShownError | null>(null);
  const handler = useRef(onEvent);
  handler.current = onEvent;

  useEffect(() => {
    const stream = api.events.stream({ types });
    let open = true;
    setState('connecting');
    setError(null);
    (async () => {
      // The first event (or the first keep-alive) is not awaited to call it live: the request
      // being answered is enough, and the SDK gives no hook for that; a short grace does.
      const timer = setTimeout(() => open && setState('live'), 1500);
      try {
        for await (const event of stream) {
          if (!open) break;
          setState('live');
          handler.current(event);
        }
      } catch (err) {
        // A refusal (the stream is not retried): shown with the API's message.
        if (open) {
          setState('failed');
          setError(shownError(err));
        }
      } finally {
        clearTimeout(timer);
      }
    })();
    return () => {
      open = false;
      stream.close();
    };
  }, [api, types]);

  return { state, error };
}
