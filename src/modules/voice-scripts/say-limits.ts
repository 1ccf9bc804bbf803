// How much text Twilio's <Say> speaks at once, by voice (Twilio's warning 13521): 4,096 bytes of
// UTF-8 for its basic voices (man, woman, alice), 3,000 for Amazon Polly's, 5,000 for Google's. A
// script without a voice is spoken in the Twilio account's default voice, which may be any of them:
// the smallest bound holds for it. A call's texts are rendered within their voice's bound, so a call
// never carries a text the provider would not speak.
import { OutputBudget } from '../automation/index.ts';

const BASIC_VOICES = new Set(['man', 'woman', 'alice']);

/** The most one <Say> of this voice takes, in UTF-8 bytes. */
export function sayLimitBytes(voice: string | null): number {
  if (voice?.startsWith('Google.')) return 5000;
  if (voice && BASIC_VOICES.has(voice)) return 4096;
  // Polly voices, and the account's default voice (Polly, Google or basic).
  return 3000;
}

/** The budget of one text of a script (its field: `tts.text`, `ivr.nodes.menu.say`). */
export function sayBudget(voice: string | null, field: string): OutputBudget {
  const whose = voice ? `voice ${voice}` : "the Twilio account's default voice";
  return new OutputBudget(
    field,
    sayLimitBytes(voice),
    'bytes',
    `the most Twilio's <Say> speaks with ${whose}`,
  );
}
