// GET /account/pricing/adjustments: what settling charges against Meta's `pricing` moved over a
// period (by when each adjustment was made, settlement.ts), per price-book rule of the messages it
// settled (`messages.price_rule`): a rule whose messages Meta keeps billing otherwise than the book
// says is the row to correct (`tidings prices load`). Read from the wallet's adjustment
// transactions themselves (their own index, migration 038), so it always agrees with the ledger.
import type { Sql } from '../../kernel/database/db.ts';
import { money } from '../billing/index.ts';
import { ruleView } from '../pricing/index.ts';

interface Row {
  price_rule: string | null;
  adjustments: number;
  messages: number;
  taken: string;
  given_back: string;
}

export async function adjustmentsByRule(sql: Sql, accountId: string, from: Date, to: Date, currency: string) {
  const { rows } = await sql.query<Row>(
    `SELECT m.price_rule, count(*)::int AS adjustments, count(DISTINCT m.id)::int AS messages,
            coalesce(sum(-t.amount_micros) FILTER (WHERE t.amount_micros < 0), 0)::text AS taken,
            coalesce(sum(t.amount_micros) FILTER (WHERE t.amount_micros > 0), 0)::text AS given_back
       FROM wallet_transactions t
       JOIN messages m ON m.id = t.reference AND m.account_id = t.account_id
      WHERE t.account_id = $1 AND t.type = 'adjustment' AND t.created_at >= $2 AND t.created_at < $3
      GROUP BY m.price_rule ORDER BY m.price_rule NULLS LAST`,
    [accountId, from, to],
  );
  const line = (r: Pick<Row, 'adjustments' | 'messages' | 'taken' | 'given_back'>) => ({
    adjustments: r.adjustments,
    messages: r.messages,
    taken: money(Number(r.taken), currency),
    givenBack: money(Number(r.given_back), currency),
    // Positive: the wallet paid more than the book's charges; negative: it was paid back.
    net: money(Number(r.taken) - Number(r.given_back), currency),
  });
  const sum = (pick: (r: Row) => number) => rows.reduce((n, r) => n + pick(r), 0);
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    ...line({
      adjustments: sum((r) => r.adjustments),
      messages: sum((r) => r.messages),
      taken: String(sum((r) => Number(r.taken))),
      given_back: String(sum((r) => Number(r.given_back))),
    }),
    byRule: rows.map((r) => ({ rule: ruleView(r.price_rule), ...line(r) })),
  };
}
