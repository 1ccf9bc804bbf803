// The sandbox's template review: the part of Meta's review that a machine can decide from the
// template alone, applied the same way every time, so a developer can rehearse both outcomes.
// Rules are tried in order and the first that applies decides; a template none applies to is
// approved. Reasons are Meta's reason codes, with an explanation after a colon.
import type { TemplateComponent, TemplateDefinition } from '../types.ts';

export type ReviewDecision = { status: 'APPROVED' } | { status: 'REJECTED'; reason: string };

/** Fixed words a body needs per placeholder, below which it is "too many variables for its length". */
export const WORDS_PER_PLACEHOLDER = 2;

// Hosts whose links hide where they lead (Meta asks for the business's own full URLs).
const SHORTENERS = new Set([
  'bit.ly',
  'tinyurl.com',
  'goo.gl',
  't.co',
  'ow.ly',
  'is.gd',
  'buff.ly',
  'rebrand.ly',
  'cutt.ly',
  'shorturl.at',
  'rb.gy',
  't.ly',
  'tiny.cc',
  'bl.ink',
]);

// Wording whose only purpose is to sell. Deliberately short: each entry is unambiguous in a
// message about an order, an account or a code, so it never fires on honest utility text (a word
// such as "free" or "offer" would: "feel free to reply", "we offer delivery").
const PROMOTIONAL = [
  'discount',
  'coupon',
  'promo code',
  'promotion',
  '% off',
  'buy now',
  'shop now',
  'limited time',
  'special offer',
  'flash sale',
  'on sale',
];

// Meta's Business Messaging Policy: never ask for full card numbers, account numbers, national ids
// or passwords over WhatsApp.
const SENSITIVE = ['card number', 'cvv', 'cvc', 'password', 'social security number', 'bank account number'];

// Numbered ({{1}}) and named ({{first_name}}, NAMED templates) alike.
const PLACEHOLDER = /\{\{(?:[1-9][0-9]*|[a-z][a-z0-9_]*)\}\}/g;
const URL_IN_TEXT = /\bhttps?:\/\/[^\s]+|\b(?:[a-z0-9-]+\.)+[a-z]{2,}\/[^\s]*/gi;
const EMOJI = /\p{Extended_Pictographic}/u;

function textsOf(components: TemplateComponent[]): string[] {
  return components.flatMap((c) => {
    if (c.type === 'BUTTONS') return c.buttons.map((b) => b.text);
    return c.text ? [c.text] : [];
  });
}

function hostOf(url: string): string | null {
  try {
    return new URL(/^https?:\/\//i.test(url) ? url : `https://${url}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

function linksOf(components: TemplateComponent[]): string[] {
  const links = textsOf(components).flatMap((t) => t.match(URL_IN_TEXT) ?? []);
  for (const c of components) {
    if (c.type === 'BUTTONS') for (const b of c.buttons) if (b.type === 'URL') links.push(b.url);
  }
  return links;
}

/** The first phrase found as whole words (a phrase starting with a symbol, like "% off", may follow a digit). */
function findPhrase(texts: string[], phrases: string[]): string | undefined {
  const all = texts.join('\n').toLowerCase();
  const edge = '[\\p{L}\\p{N}]';
  return phrases.find((p) => {
    const before = /^[\p{L}\p{N}]/u.test(p) ? `(?<!${edge})` : '';
    return new RegExp(`${before}${p}(?!${edge})`, 'u').test(all);
  });
}

const rejected = (code: string, why: string): ReviewDecision => ({
  status: 'REJECTED',
  reason: `${code}: ${why}`,
});

export function reviewTemplate(definition: TemplateDefinition): ReviewDecision {
  const { components, category } = definition;
  const texts = textsOf(components);

  const body = components.find((c) => c.type === 'BODY');
  if (body) {
    const placeholders = body.text.match(PLACEHOLDER)?.length ?? 0;
    const words = body.text.replace(PLACEHOLDER, ' ').match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
    if (placeholders > 0 && words < WORDS_PER_PLACEHOLDER * placeholders) {
      return rejected(
        'INVALID_FORMAT',
        `the body has ${placeholders} placeholders but only ${words} words of fixed text; write at least ${WORDS_PER_PLACEHOLDER} words per placeholder`,
      );
    }
  }

  const shortened = linksOf(components).find((link) => SHORTENERS.has(hostOf(link) ?? ''));
  if (shortened) {
    return rejected(
      'INVALID_FORMAT',
      `the link ${shortened} uses a URL shortener; link to your own full URL`,
    );
  }

  if (category === 'AUTHENTICATION') {
    if (linksOf(components).length > 0) {
      return rejected('INVALID_FORMAT', 'AUTHENTICATION templates may not contain URLs');
    }
    if (texts.some((t) => EMOJI.test(t))) {
      return rejected('INVALID_FORMAT', 'AUTHENTICATION templates may not contain emojis');
    }
  }

  const sensitive = findPhrase(texts, SENSITIVE);
  if (sensitive) {
    return rejected(
      'SCAM',
      `the template asks for sensitive data ("${sensitive}"), which WhatsApp's policy forbids`,
    );
  }

  if (category === 'UTILITY' || category === 'AUTHENTICATION') {
    const promotional = findPhrase(texts, PROMOTIONAL);
    if (promotional) {
      return rejected(
        'TAG_CONTENT_MISMATCH',
        `promotional wording ("${promotional}") in ${category === 'UTILITY' ? 'a' : 'an'} ${category} template; use MARKETING for promotions`,
      );
    }
  }

  return { status: 'APPROVED' };
}
