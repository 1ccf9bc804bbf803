// `tidings prices load <file>` and `tidings prices list`: the price book's rows (pricing/store.ts),
// for an operator following Meta's changes. A load writes the whole file or, naming every problem,
// nothing; running servers read the new rows within a minute (pricing/prices.ts).
import { readFileSync } from 'node:fs';
import type { Database } from '../../kernel/database/db.ts';
import { formatMicros } from '../../modules/billing/index.ts';
import {
  loadOperatorRows,
  operatorRowsOf,
  type PriceTable,
  readBook,
  ruleKey,
  writeShippedBook,
} from '../../modules/pricing/index.ts';
import { UsageError } from '../usage-error.ts';

export async function pricesLoadCommand(db: Database, path: string): Promise<string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const { rows, problems } = operatorRowsOf(parsed);
  if (problems.length > 0) throw new UsageError(`${path}: nothing loaded:\n  ${problems.join('\n  ')}`);
  await writeShippedBook(db);
  const { added, replaced } = await loadOperatorRows(db, rows);
  return `${JSON.stringify({ loaded: rows.length, added, replaced })}\n`;
}

/** The rows, one JSON line each, the operator's and the shipped ones; `at` marks those in force then. */
export async function pricesListCommand(
  db: Database,
  prices: PriceTable,
  opts: { market?: string; at?: string },
): Promise<string> {
  const at = opts.at ? new Date(`${opts.at}T00:00:00Z`) : new Date();
  if (Number.isNaN(at.getTime())) throw new UsageError('--at: must be a date, like 2027-01-01');
  // The release's shipped rows, as a server of this version writes them at start.
  await writeShippedBook(db);
  const rows = await readBook(db);
  prices.useStoredRows(rows);
  const lines = rows
    .filter((r) => !opts.market || r.market === opts.market)
    .map((r) => {
      const inForce =
        prices.entry(r.market === '*' ? null : r.market, r.category, r.rule, at)?.key === ruleKey(r);
      return JSON.stringify({
        market: r.market,
        category: r.category,
        rule: r.rule,
        price: r.priceMicros === null ? null : formatMicros(r.priceMicros),
        effectiveFrom: r.effectiveFrom.toISOString().slice(0, 10),
        source: r.source,
        inForce,
        note: r.note,
      });
    });
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
