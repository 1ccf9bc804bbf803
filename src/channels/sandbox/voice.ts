// The sandbox voice provider: every account's default, and the provider of every call a sandbox key
// makes. It places nothing anywhere: a call is taken at once, and the simulator (voice-simulator.ts)
// then plays the provider's side by the contract's magic numbers, posting Twilio-shaped callbacks
// signed with the account's sandbox auth token to the real callback route. Nothing is charged.
import { createHmac, randomBytes } from 'node:crypto';
import type { HangUpOutcome, PlaceCallRequest, PlaceOutcome, VoiceAdapter } from '../voice.ts';

/** What the person at a sandbox number does (docs/voice.md § Sandbox). */
export type SandboxCallee = 'human' | 'busy' | 'no_answer' | 'fails' | 'machine' | 'presses_1';

const MAGIC: Record<string, SandboxCallee> = {
  '+15005550001': 'human',
  '+15005550002': 'busy',
  '+15005550003': 'no_answer',
  '+15005550004': 'fails',
  '+15005550005': 'machine',
  '+15005550006': 'presses_1',
};

/** Every other number answers as a person who presses nothing (unless keys are sent). */
export function sandboxCallee(to: string): SandboxCallee {
  return MAGIC[to] ?? 'human';
}

/**
 * The auth token the sandbox signs an account's callbacks with: derived from SECRETS_KEY, so every
 * process knows it and nobody outside does, and never stored.
 */
export function sandboxVoiceToken(secretsKey: string | null, accountId: string): string {
  return createHmac('sha256', secretsKey ?? 'tidings-sandbox-voice')
    .update(`sandbox-voice:${accountId}`)
    .digest('hex')
    .slice(0, 32);
}

export class SandboxVoiceAdapter implements VoiceAdapter {
  readonly provider = 'sandbox' as const;

  async place(_request: PlaceCallRequest): Promise<PlaceOutcome> {
    // Shaped like Twilio's CallSid, marked as the sandbox's.
    return { kind: 'placed', providerCallId: `CAsandbox${randomBytes(12).toString('hex')}` };
  }

  async hangUp(): Promise<HangUpOutcome> {
    // The simulator plays the end (calls/service.ts ends its simulation).
    return { kind: 'done' };
  }
}
