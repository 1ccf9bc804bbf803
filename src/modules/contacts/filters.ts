// The list filters of GET /contacts, from query text to what the repository matches.
import { invalid } from '../../kernel/http/errors.ts';
import { normalizePhone } from '../../kernel/values/phones.ts';
import type { AttributeValue } from './fields.ts';
import { normalizeTag } from './fields.ts';
import type { ContactFilters } from './repo.ts';

export interface ContactListParams {
  q?: string;
  tag?: string[];
  phone?: string;
  whatsappUserId?: string;
  optedIn?: boolean;
  marketingOptOut?: boolean;
  createdAfter?: string;
  updatedAfter?: string;
  [attribute: `attributes[${string}]`]: string;
}

const PHONE_LIKE = /^[+\d\s().-]+$/;

/** A LIKE pattern that finds `q` anywhere in search_text: %, _ and \ in it are taken literally. */
export function searchPattern(q: string): string {
  const trimmed = q.trim().toLowerCase();
  // "+1 (415) 555" finds +1415555…: phones are stored without separators.
  const text =
    PHONE_LIKE.test(trimmed) && /\d{3}/.test(trimmed.replace(/\D/g, ''))
      ? trimmed.replace(/[^\d+]/g, '')
      : trimmed;
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The JSON values a query's text may stand for: always the string, and a number or boolean it spells. */
function attributeValues(text: string): AttributeValue[] {
  const values: AttributeValue[] = [text];
  if (text === 'true' || text === 'false') values.push(text === 'true');
  else if (text.trim() !== '' && Number.isFinite(Number(text))) values.push(Number(text));
  return values;
}

export function contactFilters(query: ContactListParams, country: string): ContactFilters {
  const filters: ContactFilters = {};
  if (query.q !== undefined) {
    if (query.q.trim().length < 3) throw invalid('q', 'must hold at least 3 characters besides spaces');
    filters.searchPattern = searchPattern(query.q);
  }
  if (query.tag) {
    filters.tags = query.tag
      .flatMap((t) => t.split(','))
      .map((raw, i) => {
        const tag = normalizeTag(raw);
        if (tag === null) throw invalid(`tag[${i}]`, 'is not a valid tag');
        return tag;
      });
  }
  if (query.phone !== undefined) {
    const phone = normalizePhone(query.phone, country);
    if (!phone) throw invalid('phone', 'is not a valid phone number');
    filters.phone = phone;
  }
  if (query.whatsappUserId !== undefined) filters.whatsappUserId = query.whatsappUserId;
  if (query.optedIn !== undefined) filters.optedIn = query.optedIn;
  if (query.marketingOptOut !== undefined) filters.marketingOptOut = query.marketingOptOut;
  if (query.createdAfter) filters.createdAfter = new Date(query.createdAfter);
  if (query.updatedAfter) filters.updatedAfter = new Date(query.updatedAfter);
  const attributes = Object.entries(query).flatMap(([key, value]) => {
    const name = /^attributes\[(.+)\]$/.exec(key)?.[1];
    return name === undefined ? [] : [{ name, values: attributeValues(String(value)) }];
  });
  if (attributes.length > 10) throw invalid('attributes', 'filter on at most 10 attributes at once');
  if (attributes.length > 0) filters.attributes = attributes;
  return filters;
}
