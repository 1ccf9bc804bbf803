// The sandbox's test numbers: US numbers in the range reserved for fiction, +1 NXX 555-01YY (any
// area code), whose last two digits choose what happens to a message sent to them, so that a
// developer can exercise every path without a real number. Every other number behaves normally:
// handed over, delivered, then read, after the account's sandbox delays.
import type { ProviderError } from '../types.ts';

export type TestNumberBehaviour =
  /** Refused at hand-over, as Meta refuses a number that is not on WhatsApp. */
  | 'unreachable'
  /** Handed over, then delivery fails. */
  | 'undeliverable'
  /** Delivered, never read. */
  | 'unread'
  /** The provider cannot be reached on any attempt: retried, then failed. */
  | 'unavailable'
  | 'normal';

const TEST_NUMBER = /^\+1[2-9]\d{2}55501(\d{2})$/;

const BY_SUFFIX: Record<string, TestNumberBehaviour> = {
  '01': 'unreachable',
  '02': 'undeliverable',
  '03': 'unread',
  '04': 'unavailable',
};

export function testNumberBehaviour(e164: string): TestNumberBehaviour {
  const suffix = TEST_NUMBER.exec(e164)?.[1];
  return (suffix && BY_SUFFIX[suffix]) || 'normal';
}

export const SANDBOX_ERRORS = {
  unreachable: {
    code: 'RECIPIENT_UNREACHABLE',
    message: 'Sandbox test number +1…555-0101: the recipient is not on WhatsApp.',
    providerCode: 131026,
  },
  undeliverable: {
    code: 'RECIPIENT_UNREACHABLE',
    message: 'Sandbox test number +1…555-0102: the message could not be delivered.',
    providerCode: 131049,
  },
  unavailable: {
    code: 'PROVIDER_UNAVAILABLE',
    message: 'Sandbox test number +1…555-0104: the provider could not be reached.',
    providerCode: 131016,
  },
} satisfies Record<string, ProviderError>;
