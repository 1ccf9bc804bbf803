// The CSV's header and rows, turned into the contacts the bulk endpoint takes.
import { ATTRIBUTE_NAME } from '../../modules/contacts/index.ts';
import { type ContactInput, type RowError, UsageError } from './types.ts';

type Field = 'phone' | 'name' | 'email' | 'tags' | 'optedIn' | 'marketingOptOut';

const FIELD_COLUMNS: Record<string, Field> = {
  phone: 'phone',
  name: 'name',
  email: 'email',
  tags: 'tags',
  optedin: 'optedIn',
  opted_in: 'optedIn',
  marketingoptout: 'marketingOptOut',
  marketing_opt_out: 'marketingOptOut',
};

export interface Columns {
  fields: Partial<Record<Field, number>>;
  attributes: { name: string; index: number }[];
  width: number;
}

/** Which column gives what: the known fields by name (any case), every other column an attribute. */
export function mapHeader(header: string[]): Columns {
  const fields: Partial<Record<Field, number>> = {};
  const attributes: Columns['attributes'] = [];
  const seen = new Set<string>();
  header.forEach((raw, index) => {
    const name = raw.trim();
    if (name === '') throw new UsageError(`column ${index + 1} of the header has no name`);
    if (seen.has(name.toLowerCase())) throw new UsageError(`the header names the column "${name}" twice`);
    seen.add(name.toLowerCase());
    const field = FIELD_COLUMNS[name.toLowerCase()];
    if (field && fields[field] !== undefined) {
      throw new UsageError(`the columns "${header[fields[field]]?.trim()}" and "${name}" both give ${field}`);
    }
    if (field) fields[field] = index;
    else if (ATTRIBUTE_NAME.test(name)) attributes.push({ name, index });
    else {
      throw new UsageError(
        `the column "${name}" cannot be an attribute: attribute names start with a letter or _ and hold at most 40 letters, digits or _`,
      );
    }
  });
  if (fields.phone === undefined) throw new UsageError('the header row has no "phone" column');
  return { fields, attributes, width: header.length };
}

const TRUE_WORDS = new Set(['true', 'yes', '1']);
const FALSE_WORDS = new Set(['false', 'no', '0']);

/** true/false/yes/no/1/0 (any case); undefined for an empty cell; null for anything else. */
export function parseFlag(raw: string): boolean | undefined | null {
  const word = raw.trim().toLowerCase();
  if (word === '') return undefined;
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return null;
}

/** Tags separated by ; or |, trimmed, empty ones left out. */
export function splitTags(raw: string): string[] {
  return raw
    .split(/[;|]/)
    .map((t) => t.trim())
    .filter(Boolean);
}

/** The contact a CSV row describes (empty cells left out), or why the row cannot be sent. */
export function toContactInput(
  record: string[],
  columns: Columns,
): { contact: ContactInput } | { error: RowError } {
  if (record.length > columns.width) {
    return {
      error: {
        code: 'INVALID_CSV_ROW',
        message: `The row has ${record.length} fields; the header has ${columns.width}.`,
      },
    };
  }
  const cell = (index: number | undefined) => (index === undefined ? '' : (record[index] ?? '').trim());
  const contact: ContactInput = {};
  for (const field of ['phone', 'name', 'email'] as const) {
    const value = cell(columns.fields[field]);
    if (value !== '') contact[field] = value;
  }
  const tags = splitTags(cell(columns.fields.tags));
  if (tags.length > 0) contact.tags = tags;
  for (const field of ['optedIn', 'marketingOptOut'] as const) {
    const flag = parseFlag(cell(columns.fields[field]));
    if (flag === null) {
      const issue = 'must be true, false, yes, no, 1 or 0';
      return {
        error: {
          code: 'INVALID_REQUEST',
          message: `Invalid request: ${field} ${issue}.`,
          details: [{ field, issue }],
        },
      };
    }
    if (flag !== undefined) contact[field] = flag;
  }
  const attributes: Record<string, string> = {};
  for (const { name, index } of columns.attributes) {
    const value = cell(index);
    if (value !== '') attributes[name] = value;
  }
  if (Object.keys(attributes).length > 0) contact.attributes = attributes;
  return { contact };
}
