// POST /messages/estimate: what a send (or a bulk send) would cost, priced by exactly the rules and
// the state the send would use, without sending or charging anything.
import { providerFor, type SendMode } from '../../channels/registry.ts';
import type { AccountSnapshot } from '../../kernel/access/auth.ts';
import type { Database } from '../../kernel/database/db.ts';
import { findAccount } from '../accounts/index.ts';
import { invalidFields } from '../contacts/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import { quote, windowOpen } from '../pricing/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import { cswViolation } from './accept.ts';
import { lastInboundOf, prepareRecipients, type RecipientInput } from './batch.ts';
import type { SendFieldsInput } from './content.ts';
import { prepareMessage, templateLookup } from './prepare.ts';
import { type RecipientInput as NamedRecipient, resolveRecipient } from './recipient.ts';

export interface EstimateServices {
  db: Database;
  approvedTemplates: ApprovedTemplates;
  prices: PriceTable;
  now: () => Date;
  /** The account's uploads, for a send by `media.id` (one recipient). */
  media?: {
    forSend: (accountId: string, id: string) => Promise<{ kind: string; filename: string | null } | null>;
  };
}

export interface EstimateLine {
  index: number;
  to: string;
  country: string | null;
  category: string | null;
  listPriceMicros: number;
  chargeMicros: number;
  /** What the same send would charge on a live channel (equal to chargeMicros off the sandbox). */
  liveChargeMicros: number;
  freeReason: string | null;
  rule: string | null;
  error: { code: string; message: string; details?: unknown } | null;
}

export interface Estimate {
  lines: EstimateLine[];
  totalMicros: number;
  liveTotalMicros: number;
  balanceMicros: number;
  currency: string;
  provider: string;
}

export async function estimate(
  s: EstimateServices,
  account: Pick<AccountSnapshot, 'id' | 'countryCode' | 'channelProvider'>,
  mode: SendMode,
  body: SendFieldsInput & NamedRecipient & { recipients?: RecipientInput[] },
): Promise<Estimate> {
  const { to, contactId, whatsappUserId, recipients, ...fields } = body;
  const one = to !== undefined || contactId !== undefined || whatsappUserId !== undefined;
  if (one === (recipients !== undefined)) {
    throw invalidFields([
      { field: 'to', issue: 'give either to (one recipient) or recipients (a list), not both' },
    ]);
  }
  const provider = providerFor(account.channelProvider, mode);
  const now = s.now();
  // One recipient answers exactly as the send would, errors included; a list reports each
  // recipient's own error in its line.

  const prepared = one
    ? [
        {
          index: 0,
          to: to ?? whatsappUserId ?? contactId ?? '',
          prepared: await prepareMessage(
            { ...fields, ...(await resolveRecipient(s.db, account.id, { to, contactId, whatsappUserId })) },
            {
              countryCode: account.countryCode,
              lookup: templateLookup(s.db, account.id, s.approvedTemplates),
              ...(s.media ? { media: (id: string) => s.media!.forSend(account.id, id) } : {}),
            },
          ),
          error: null,
        },
      ]
    : await prepareRecipients(s.db, s.approvedTemplates, account, fields, recipients ?? []);
  const addresses = prepared.flatMap((p) => (p.prepared ? [p.prepared.to] : []));
  const [inbound, wallet] = await Promise.all([
    lastInboundOf(s.db, account.id, addresses),
    findAccount(s.db, account.id),
  ]);
  const lines: EstimateLine[] = prepared.map((p) => {
    const none = {
      index: p.index,
      to: p.to,
      country: null,
      category: null,
      listPriceMicros: 0,
      chargeMicros: 0,
      liveChargeMicros: 0,
      freeReason: null,
      rule: null,
    };
    if (!p.prepared) {
      return { ...none, error: { code: p.error.code, message: p.error.message, details: p.error.details } };
    }
    const m = p.prepared;
    const open = windowOpen(inbound.get(m.to) ?? null, now);
    if (m.freeForm && !open) {
      if (one) throw cswViolation(m.to);
      const e = cswViolation(m.to);
      return { ...none, to: m.to, error: { code: e.code, message: e.message } };
    }
    const priced = { country: m.country, category: m.category, windowOpen: open, at: now };
    const q = quote(s.prices, { ...priced, provider });
    // The sandbox charges nothing; a newcomer still wants to know what going live would cost.
    const live = provider === 'sandbox' ? quote(s.prices, { ...priced, provider: 'whatsapp_cloud' }) : q;
    return { ...none, to: m.to, ...q, liveChargeMicros: live.chargeMicros, error: null };
  });
  return {
    lines,
    totalMicros: lines.reduce((sum, l) => sum + l.chargeMicros, 0),
    liveTotalMicros: lines.reduce((sum, l) => sum + l.liveChargeMicros, 0),
    balanceMicros: wallet?.wallet_balance_micros ?? 0,
    currency: wallet?.currency ?? 'USD',
    provider,
  };
}
