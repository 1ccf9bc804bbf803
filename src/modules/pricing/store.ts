// The price_book table (migration 038): the shipped rows rewritten from the release at start, the
// operator's loaded from a file (`tidings prices load`), and all of them read back into a process's
// PriceTable at start and every minute (prices.ts). The file the operator loads:
//
//   { "currency": "USD",
//     "rows": [ { "market": "US", "category": "marketing", "price": "0.0275", "effectiveFrom": "2027-01-01" },
//               { "market": "*", "category": "utility", "rule": "in_window", "price": null,
//                 "effectiveFrom": "2026-10-01", "note": "Meta charges in-window utility" } ] }
//
// Every problem is named and nothing is written unless the whole file is good. A row of the same
// market, category, rule and date as one loaded before replaces it (a correction); any other row is
// added, so older messages stay explained by the rows that priced them.
import type { Database, Sql } from '../../kernel/database/db.ts';
import { ANY_MARKET, type BookRow, CATEGORIES, type PriceCategory, type PriceRule, RULES } from './book.ts';
import { AMOUNT, micros } from './money-text.ts';
import type { PriceTable } from './prices.ts';
import { SHIPPED_BOOK } from './shipped-book.ts';

/** How many rows one file may load (Meta's rate card is some 60 markets × 5 columns). */
export const MAX_ROWS_PER_FILE = 10_000;
/** How often a running process reads the book again. */
export const BOOK_REFRESH_MS = 60_000;

interface StoredRow {
  market: string;
  category: string;
  rule: string;
  price_micros: string | number | null;
  effective_from: Date;
  source: string;
  note: string | null;
}

const toRow = (r: StoredRow): BookRow => ({
  market: r.market,
  category: r.category as PriceCategory,
  rule: r.rule as PriceRule,
  priceMicros: r.price_micros === null ? null : Number(r.price_micros),
  effectiveFrom: new Date(r.effective_from),
  source: r.source as BookRow['source'],
  note: r.note,
});

const sameRow = (a: BookRow, b: BookRow) =>
  a.market === b.market &&
  a.category === b.category &&
  a.rule === b.rule &&
  a.priceMicros === b.priceMicros &&
  a.effectiveFrom.getTime() === b.effectiveFrom.getTime() &&
  a.note === b.note;

export async function readBook(db: Sql): Promise<BookRow[]> {
  const { rows } = await db.query<StoredRow>(
    `SELECT market, category, rule, price_micros, effective_from, source, note FROM price_book
      ORDER BY source, market, category, rule, effective_from`,
  );
  return rows.map(toRow);
}

async function upsertRows(tx: Sql, rows: readonly BookRow[], source: 'shipped' | 'operator'): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO price_book (market, category, rule, price_micros, effective_from, source, note)
     SELECT r.market, r.category, r.rule, r.price_micros, r.effective_from, $2, r.note
       FROM json_to_recordset($1::json) AS r(market text, category text, rule text, price_micros bigint,
                                             effective_from timestamptz, note text)
     ON CONFLICT (source, market, category, rule, effective_from)
       DO UPDATE SET price_micros = EXCLUDED.price_micros, note = EXCLUDED.note`,
    [
      JSON.stringify(
        rows.map((r) => ({
          market: r.market,
          category: r.category,
          rule: r.rule,
          price_micros: r.priceMicros,
          effective_from: r.effectiveFrom.toISOString(),
          note: r.note,
        })),
      ),
      source,
    ],
  );
}

/** Makes the table's shipped rows the release's (a read when they already are, the usual case). */
export async function writeShippedBook(db: Database): Promise<void> {
  const stored = (await readBook(db)).filter((r) => r.source === 'shipped');
  const same =
    stored.length === SHIPPED_BOOK.length && SHIPPED_BOOK.every((r) => stored.some((s) => sameRow(r, s)));
  if (same) return;
  await db.transaction(async (tx) => {
    await tx.query(`DELETE FROM price_book WHERE source = 'shipped'`);
    await upsertRows(tx, SHIPPED_BOOK, 'shipped');
  });
}

/** Reads the book into `prices` now and every BOOK_REFRESH_MS; answers the function that stops it. */
export async function attachBook(db: Database, prices: PriceTable): Promise<() => void> {
  await writeShippedBook(db).catch(async (err) => {
    // Two processes starting at once both rewrote the shipped rows; one of them lost the race to
    // the unique key, and the winner's rows are the release's too.
    if ((err as { code?: string }).code !== '23505') throw err;
  });
  prices.useStoredRows(await readBook(db));
  const timer = setInterval(() => {
    readBook(db).then(
      (rows) => prices.useStoredRows(rows),
      // A failed read keeps the book as it was; the next minute tries again.
      () => {},
    );
  }, BOOK_REFRESH_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Every problem of a file for `tidings prices load`, as `path: issue` lines, or its rows. */
export function operatorRowsOf(file: unknown): { rows: BookRow[]; problems: string[] } {
  const problems: string[] = [];
  const rows: BookRow[] = [];
  if (typeof file !== 'object' || file === null || Array.isArray(file))
    return { rows, problems: ['the file must hold a JSON object'] };
  const f = file as Record<string, unknown>;
  for (const key of Object.keys(f))
    if (key !== 'currency' && key !== 'rows') problems.push(`${key}: is not a known field`);
  if (f.currency !== 'USD') problems.push('currency: must be "USD" (the wallets are in USD)');
  if (!Array.isArray(f.rows)) return { rows, problems: [...problems, 'rows: must be a list'] };
  if (f.rows.length > MAX_ROWS_PER_FILE) problems.push(`rows: at most ${MAX_ROWS_PER_FILE} in one file`);
  const seen = new Set<string>();
  for (const [i, raw] of f.rows.slice(0, MAX_ROWS_PER_FILE).entries()) {
    const at = `rows[${i}]`;
    if (typeof raw !== 'object' || raw === null) {
      problems.push(`${at}: must be an object`);
      continue;
    }
    const r = raw as Record<string, unknown>;
    const before = problems.length;
    for (const key of Object.keys(r)) {
      if (!['market', 'category', 'rule', 'price', 'effectiveFrom', 'note'].includes(key))
        problems.push(`${at}.${key}: is not a known field`);
    }
    const market = r.market;
    if (typeof market !== 'string' || !(market === ANY_MARKET || /^[A-Z]{2}$/.test(market)))
      problems.push(`${at}.market: must be an ISO 3166-1 alpha-2 code, or "*" for every other market`);
    if (!(CATEGORIES as readonly unknown[]).includes(r.category))
      problems.push(`${at}.category: must be one of ${CATEGORIES.join(', ')}`);
    const rule = r.rule ?? 'list';
    if (!(RULES as readonly unknown[]).includes(rule))
      problems.push(`${at}.rule: must be one of ${RULES.join(', ')}`);
    const price = r.price;
    if (price === null ? rule !== 'in_window' : typeof price !== 'string' || !AMOUNT.test(price))
      problems.push(
        `${at}.price: must be a decimal string like "0.0250" (null only on an in_window row, to withdraw the rule)`,
      );
    const from = typeof r.effectiveFrom === 'string' ? new Date(`${r.effectiveFrom}T00:00:00Z`) : null;
    if (!from || !/^\d{4}-\d{2}-\d{2}$/.test(r.effectiveFrom as string) || Number.isNaN(from.getTime()))
      problems.push(`${at}.effectiveFrom: must be a date, like "2027-01-01" (its start, UTC)`);
    if (r.note !== undefined && (typeof r.note !== 'string' || r.note.length > 500))
      problems.push(`${at}.note: must be text of at most 500 characters`);
    if (problems.length > before) continue;
    const key = `${market}|${r.category}|${rule}|${r.effectiveFrom}`;
    if (seen.has(key)) {
      problems.push(
        `${at}: the file already has a row for ${market} ${r.category} ${rule} from ${r.effectiveFrom}`,
      );
      continue;
    }
    seen.add(key);
    rows.push({
      market: market as string,
      category: r.category as PriceCategory,
      rule: rule as PriceRule,
      priceMicros: price === null ? null : micros(price as string),
      effectiveFrom: from!,
      source: 'operator',
      note: (r.note as string | undefined) ?? null,
    });
  }
  return { rows, problems };
}

/** Writes the operator's rows; answers how many were new and how many replaced a row of the same date. */
export async function loadOperatorRows(db: Database, rows: readonly BookRow[]) {
  return db.transaction(async (tx) => {
    const before = new Set(
      (await readBook(tx))
        .filter((r) => r.source === 'operator')
        .map((r) => `${r.market}|${r.category}|${r.rule}|${r.effectiveFrom.getTime()}`),
    );
    await upsertRows(tx, rows, 'operator');
    const replaced = rows.filter((r) =>
      before.has(`${r.market}|${r.category}|${r.rule}|${r.effectiveFrom.getTime()}`),
    ).length;
    return { added: rows.length - replaced, replaced };
  });
}
