// A CSV of contacts read in the browser: RFC 4180 fields (quoted fields may hold commas, quotes
// doubled, and line breaks), then the columns mapped as `tidings contacts import` maps them
// (src/cli/contacts-import/rows.ts): phone, name, email, tags (separated by ; or |), optedIn,
// marketingOptOut by name in any case, every other column an attribute.

/** The records of a CSV text (a trailing empty line is not a record). */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark
  for (; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') {
      record.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else field += ch;
  }
  if (quoted) throw new Error('The file ends inside a quoted field (a " is not closed).');
  if (field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records.filter((r) => !(r.length === 1 && r[0]!.trim() === ''));
}

type Known = 'phone' | 'name' | 'email' | 'tags' | 'optedIn' | 'marketingOptOut';
const COLUMNS: Record<string, Known> = {
  phone: 'phone',
  name: 'name',
  email: 'email',
  tags: 'tags',
  optedin: 'optedIn',
  opted_in: 'optedIn',
  marketingoptout: 'marketingOptOut',
  marketing_opt_out: 'marketingOptOut',
};
const ATTRIBUTE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;

export interface CsvContacts {
  contacts: Record<string, unknown>[];
  /** The file's line of each contact (the header is line 1), for the errors shown. */
  lines: number[];
}

function flag(raw: string, column: string): boolean | undefined {
  const w = raw.trim().toLowerCase();
  if (w === '') return undefined;
  if (['true', 'yes', '1'].includes(w)) return true;
  if (['false', 'no', '0'].includes(w)) return false;
  throw new Error(`${column} must be true, false, yes, no, 1 or 0 (found "${raw}").`);
}

/** The contacts of a CSV file; a header problem or a bad cell is thrown with where it is. */
export function contactsOf(text: string): CsvContacts {
  const [header, ...rows] = parseCsv(text);
  if (!header) throw new Error('The file is empty.');
  const fields: Partial<Record<Known, number>> = {};
  const attributes: { name: string; index: number }[] = [];
  header.forEach((raw, index) => {
    const name = raw.trim();
    const known = COLUMNS[name.toLowerCase()];
    if (known) fields[known] = index;
    else if (ATTRIBUTE_NAME.test(name)) attributes.push({ name, index });
    else
      throw new Error(`The column "${name}" cannot be an attribute: use letters, digits or _ (at most 40).`);
  });
  if (fields.phone === undefined) throw new Error('The header row has no "phone" column.');
  const out: CsvContacts = { contacts: [], lines: [] };
  rows.forEach((record, n) => {
    const line = n + 2;
    const cell = (i: number | undefined) => (i === undefined ? '' : (record[i] ?? '').trim());
    const contact: Record<string, unknown> = {};
    for (const f of ['phone', 'name', 'email'] as const) if (cell(fields[f])) contact[f] = cell(fields[f]);
    const tags = cell(fields.tags)
      .split(/[;|]/)
      .map((t) => t.trim())
      .filter(Boolean);
    if (tags.length > 0) contact.tags = tags;
    for (const f of ['optedIn', 'marketingOptOut'] as const) {
      try {
        const v = flag(cell(fields[f]), f);
        if (v !== undefined) contact[f] = v;
      } catch (err) {
        throw new Error(`Line ${line}: ${(err as Error).message}`);
      }
    }
    const attrs = Object.fromEntries(
      attributes.filter((a) => cell(a.index) !== '').map((a) => [a.name, cell(a.index)]),
    );
    if (Object.keys(attrs).length > 0) contact.attributes = attrs;
    out.contacts.push(contact);
    out.lines.push(line);
  });
  if (out.contacts.length === 0) throw new Error('The file has a header but no rows.');
  return out;
}
