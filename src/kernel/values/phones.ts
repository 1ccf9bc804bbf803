// Phone numbers, in one place and on one metadata build. Every number Tidings stores or compares is
// E.164 with its leading +, read with libphonenumber's `max` metadata (the full validation rules:
// the `min` build accepts numbers the full rules refuse, such as a Brazilian mobile number without
// its ninth digit, so two modules reading one number with different builds could disagree on it).
//
// Two kinds of input:
// - what a client writes (`normalizePhone`): validated; a number without a country code is read as
//   the account's country's; an invalid number is refused (null);
// - what a provider reports (`fromProviderDigits`): WhatsApp's `from`, `wa_id` and `recipient_id`
//   are digits without the plus. Such a number is the provider's fact, not a client's typo, so one
//   the rules find invalid is kept as given (with its plus) rather than dropped.
import type { CountryCode } from 'libphonenumber-js/max';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** E.164 for a number a client wrote, reading one without a country code as `country`'s; or null. */
export function normalizePhone(raw: string, country?: string): string | null {
  const parsed = parsePhoneNumberFromString(raw.trim(), country as CountryCode | undefined);
  return parsed?.isValid() ? parsed.number : null;
}

/** ISO 3166-1 alpha-2 of an E.164 number; null for a number of no country (+800 …) or none at all. */
export function countryOf(e164: string): string | null {
  return parsePhoneNumberFromString(e164)?.country ?? null;
}

/** Up to 15 digits, an optional plus: the shape of a number a provider reports. */
const PROVIDER_NUMBER = /^\+?(\d{1,15})$/;

/**
 * The E.164 form of a number a provider reports (`"15551234567"` → `"+15551234567"`), normalised
 * when it is valid, kept as given otherwise; null when it is not a number at all.
 */
export function fromProviderDigits(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const found = PROVIDER_NUMBER.exec(value.trim());
  if (!found) return null;
  const raw = `+${found[1]}`;
  return normalizePhone(raw) ?? raw;
}

/** A provider's user id for a number (WhatsApp's `wa_id`): its digits, as the provider writes them. */
export function providerDigits(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const found = PROVIDER_NUMBER.exec(value.trim());
  return found ? found[1]! : null;
}
