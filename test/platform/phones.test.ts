// The kernel's phone numbers: one metadata build for every module, clients' numbers validated,
// providers' numbers kept even where the rules would refuse them.
import { describe, expect, it } from 'vitest';
import {
  countryOf,
  fromProviderDigits,
  normalizePhone,
  providerDigits,
} from '../../src/kernel/values/phones.ts';

describe('phones', () => {
  it("reads a client's number as E.164, without a country code as the account's country's", () => {
    expect(normalizePhone('(415) 555-0123', 'US')).toBe('+14155550123');
    expect(normalizePhone(' +44 7911 123456 ')).toBe('+447911123456');
    expect(normalizePhone('+55 11 98765-4321')).toBe('+5511987654321');
  });

  it('refuses what the full rules refuse, such as a Brazilian mobile number without its ninth digit', () => {
    expect(normalizePhone('+551187654321')).toBeNull();
    expect(normalizePhone('+5215512345678')).toBeNull();
    expect(normalizePhone('12', 'US')).toBeNull();
  });

  it("keeps a provider's number even where the rules refuse it, normalised where they accept it", () => {
    expect(fromProviderDigits('14155550123')).toBe('+14155550123');
    expect(fromProviderDigits('551187654321')).toBe('+551187654321');
    expect(fromProviderDigits('+5215512345678')).toBe('+5215512345678');
    expect(fromProviderDigits('not a number')).toBeNull();
    expect(fromProviderDigits('1234567890123456')).toBeNull();
    expect(fromProviderDigits(15551234567)).toBeNull();
  });

  it("gives a provider's user id as its digits, and a number's country", () => {
    expect(providerDigits('+5215512345678')).toBe('5215512345678');
    expect(providerDigits('55 11')).toBeNull();
    expect(countryOf('+442071838750')).toBe('GB');
    expect(countryOf('+447911123456')).toBe('GG');
    expect(countryOf('+80012345678')).toBeNull();
  });
});
