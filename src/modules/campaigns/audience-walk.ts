// Walking a campaign's audience (docs/messaging.md § Campaigns) for its estimate and, at start, to
// fix it: each contact is priced exactly as its send will be (the price table, the template's
// category, the service window as it stands, the sandbox free), or skipped when the template is
// MARKETING and the contact opted out of marketing. At start each page also becomes recipient rows
// (duplicates cannot exist: a row per (campaign, contact)). Pages of contacts, never the whole
// audience in memory.
import type { Provider, TemplateCategory } from '../../channels/types.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { eachAudiencePage } from '../campaign-shared/index.ts';
import { contactCountry } from '../contacts/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import { categoryOf, quote, windowOpen } from '../pricing/index.ts';
import type { CampaignRow } from './repo.ts';

export interface EstimateLine {
  country: string | null;
  category: string;
  /** The book's rule that priced these sends (pricing/book.ts ruleKey). */
  rule: string;
  unitMicros: number;
  count: number;
  free: number;
  amountMicros: number;
  /** What these sends would cost on a live channel (equal to amountMicros off the sandbox). */
  liveAmountMicros: number;
}

export interface Walked {
  recipients: number;
  skipped: number;
  totalMicros: number;
  liveTotalMicros: number;
  lines: EstimateLine[];
}

export async function walkAudience(
  sql: Sql,
  prices: PriceTable,
  campaign: Pick<CampaignRow, 'id' | 'account_id' | 'audience'>,
  template: { category: TemplateCategory },
  provider: Provider,
  now: Date,
  fix: boolean,
): Promise<Walked> {
  const category = categoryOf(template.category);
  const marketing = template.category === 'MARKETING';
  const lines = new Map<string, EstimateLine>();
  const walked: Walked = { recipients: 0, skipped: 0, totalMicros: 0, liveTotalMicros: 0, lines: [] };
  await eachAudiencePage(sql, campaign.account_id, campaign.audience, now, async (contacts) => {
    const states: string[] = [];
    for (const c of contacts) {
      if (marketing && c.marketing_opt_out) {
        walked.skipped++;
        states.push('skipped');
        continue;
      }
      states.push('pending');
      walked.recipients++;
      const priced = {
        country: contactCountry(c),
        category,
        windowOpen: windowOpen(c.last_inbound_at, now),
        at: now,
      };
      const q = quote(prices, { ...priced, provider });
      const live = provider === 'sandbox' ? quote(prices, { ...priced, provider: 'whatsapp_cloud' }) : q;
      const key = `${q.country}/${q.category}/${q.rule}`;
      const line = lines.get(key) ?? {
        country: q.country,
        category: q.category,
        rule: q.rule,
        unitMicros: q.listPriceMicros,
        count: 0,
        free: 0,
        amountMicros: 0,
        liveAmountMicros: 0,
      };
      line.count++;
      if (q.chargeMicros === 0 && q.listPriceMicros > 0) line.free++;
      line.amountMicros += q.chargeMicros;
      line.liveAmountMicros += live.chargeMicros;
      lines.set(key, line);
      walked.totalMicros += q.chargeMicros;
      walked.liveTotalMicros += live.chargeMicros;
    }
    if (fix && contacts.length > 0) {
      await sql.query(
        `INSERT INTO campaign_recipients (campaign_id, contact_id, account_id, phone, state, reason, due_at)
         SELECT $1, c.id, $2, c.phone, c.state, CASE WHEN c.state = 'skipped' THEN 'opted_out' END, $3
           FROM unnest($4::text[], $5::text[], $6::text[]) AS c (id, phone, state)
         ON CONFLICT DO NOTHING`,
        [
          campaign.id,
          campaign.account_id,
          now,
          contacts.map((c) => c.id),
          contacts.map((c) => c.phone),
          states,
        ],
      );
    }
  });
  walked.lines = [...lines.values()].sort(
    (a, b) => (a.country ?? '').localeCompare(b.country ?? '') || a.category.localeCompare(b.category),
  );
  return walked;
}
