// What the sandbox plays back after handing a message over: the status callbacks a provider would
// send, each after a delay from the previous one (the account's sandbox settings).
import type { SandboxSettings } from '../settings.ts';
import type { MessageStatusUpdate, ProviderError } from '../types.ts';
import { SANDBOX_ERRORS, testNumberBehaviour } from './test-numbers.ts';

export interface SimulatedStatus {
  status: MessageStatusUpdate;
  /** Milliseconds after the previous step (the hand-over, for the first). */
  afterMs: number;
  error?: ProviderError;
}

export function simulatedStatuses(to: string, settings: SandboxSettings): SimulatedStatus[] {
  const behaviour = testNumberBehaviour(to);
  if (behaviour === 'undeliverable') {
    return [{ status: 'failed', afterMs: settings.deliveredAfterMs, error: SANDBOX_ERRORS.undeliverable }];
  }
  const steps: SimulatedStatus[] = [{ status: 'delivered', afterMs: settings.deliveredAfterMs }];
  if (behaviour !== 'unread' && settings.readAfterMs !== null) {
    steps.push({ status: 'read', afterMs: settings.readAfterMs });
  }
  return steps;
}
