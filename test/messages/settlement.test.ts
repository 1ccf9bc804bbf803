// The settlement rule of src/modules/messages/settlement.ts, case by case: what a message should
// cost given what happened to it and what the provider says it bills.
import { describe, expect, it } from 'vitest';
import { adjustmentDue, netOf, targetOf } from '../../src/modules/messages/settlement.ts';

const AT = new Date('2026-11-25T10:00:00Z');
const base = {
  status: 'queued' as const,
  charged_micros: 25_000,
  refunded_at: null,
  delivered_at: null,
  provider_pricing: null,
  adjusted_micros: 0,
  unpaid_micros: 0,
};
const billable = (b: boolean | null) => ({ billable: b, model: 'PMP', category: 'marketing', type: null });

describe('settling a charge', () => {
  it('leaves the charge while the message is on its way', () => {
    expect(adjustmentDue(base)).toBe(0);
    expect(adjustmentDue({ ...base, status: 'sent', provider_pricing: billable(false) })).toBe(0);
  });

  it('owes nothing once a failure was refunded', () => {
    const refunded = { ...base, status: 'failed' as const, refunded_at: AT };
    expect([targetOf(refunded), netOf(refunded), adjustmentDue(refunded)]).toEqual([0, 0, 0]);
  });

  it('takes the refund back when the failed message is delivered after all, unless Meta bills nothing', () => {
    const late = { ...base, status: 'delivered' as const, refunded_at: AT, delivered_at: AT };
    expect(adjustmentDue(late)).toBe(25_000);
    expect(adjustmentDue({ ...late, provider_pricing: billable(true) })).toBe(25_000);
    expect(adjustmentDue({ ...late, provider_pricing: billable(false) })).toBe(0);
    expect(adjustmentDue({ ...late, adjusted_micros: 25_000 })).toBe(0);
    expect(adjustmentDue({ ...late, adjusted_micros: 10_000, unpaid_micros: 15_000 })).toBe(0);
  });

  it('pays back a delivered charge Meta did not bill, and never a free message', () => {
    const delivered = {
      ...base,
      status: 'delivered' as const,
      delivered_at: AT,
      provider_pricing: billable(false),
    };
    expect(adjustmentDue(delivered)).toBe(-25_000);
    expect(adjustmentDue({ ...delivered, adjusted_micros: -25_000 })).toBe(0);
    expect(adjustmentDue({ ...delivered, charged_micros: 0 })).toBe(0);
    expect(adjustmentDue({ ...delivered, charged_micros: 0, provider_pricing: billable(true) })).toBe(0);
  });
});
