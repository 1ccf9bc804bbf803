// WhatsApp's rules for the message kinds beyond text, media, buttons and lists, that a schema cannot
// say: a reaction is one emoji (or none, to remove it); a sticker is a webp without caption; a
// contact card has a formatted name, a real birthday, emails and links that look like them; a CTA
// URL button opens an https link; a location request is a body and WhatsApp's own button, nothing
// else. Each rule answers with the field it is about (content.ts gathers them).
import type {
  ContactCard,
  InteractiveContactRequest,
  InteractiveCtaUrl,
  InteractiveLocationRequest,
} from '../../channels/types.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';

/** Meta's limit on a CTA URL or location request body (4096 is a list's). */
const INTERACTIVE_BODY_MAX = 1024;

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
/** A pictograph, a flag's regional indicators, or a keycap (1️⃣): what WhatsApp shows as an emoji. */
const EMOJI = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u;

/** Why `emoji` is not one emoji (nor empty, which removes the reaction), or null. */
export function emojiIssue(emoji: string): string | null {
  if (emoji === '') return null;
  const segments = [...graphemes.segment(emoji)];
  if (segments.length !== 1 || !EMOJI.test(emoji))
    return 'must be exactly one emoji (or empty, to remove the reaction)';
  return null;
}

/** A sticker is a webp image (static up to 100 KB, animated up to 500 KB), shown without words. */
export function stickerIssues(media: { url?: string; caption?: string }): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (media.caption !== undefined) issues.push({ field: 'media.caption', issue: 'is not for stickers' });
  // A link whose name says another type is refused now rather than by Meta later; a link without
  // an extension (a CDN's) is WhatsApp's to check when it fetches the file.
  // An upload (`media.id`) was checked as a webp sticker when it was uploaded.
  if (media.url === undefined) return issues;
  let extension: string | undefined;
  try {
    extension = /\.([a-z0-9]+)$/i.exec(new URL(media.url).pathname)?.[1]?.toLowerCase();
  } catch {
    extension = undefined; // content.ts reports the link itself
  }
  if (extension !== undefined && extension !== 'webp')
    issues.push({ field: 'media.url', issue: `must be a webp image for a sticker, not .${extension}` });
  return issues;
}

const isHttps = (url: string) => {
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false;
  }
};

const ONLY_FOR: Record<string, string> = {
  buttons: 'is only for kind buttons',
  buttonText: 'is only for kind list',
  sections: 'is only for kind list',
  button: 'is only for kind cta_url',
  header: 'is not for kinds location_request and contact_request',
  footer: 'is not for kinds location_request and contact_request',
};

type InteractiveInput = {
  kind: 'cta_url' | 'location_request' | 'contact_request';
  header?: string;
  body: string;
  footer?: string;
  buttons?: unknown;
  buttonText?: string;
  sections?: unknown;
  button?: { text: string; url: string };
};

/** A CTA URL button, a location request or a contact request, checked; problems added to `issues`. */
export function interactiveKindIssues(
  input: InteractiveInput,
  issues: FieldIssue[],
): InteractiveCtaUrl | InteractiveLocationRequest | InteractiveContactRequest {
  const foreign =
    input.kind === 'cta_url'
      ? (['buttons', 'buttonText', 'sections'] as const)
      : (['buttons', 'buttonText', 'sections', 'button', 'header', 'footer'] as const);
  for (const f of foreign) {
    if (input[f] !== undefined) issues.push({ field: `interactive.${f}`, issue: ONLY_FOR[f]! });
  }
  if (input.body.length > INTERACTIVE_BODY_MAX)
    issues.push({
      field: 'interactive.body',
      issue: `must be at most ${INTERACTIVE_BODY_MAX} characters with kind ${input.kind}`,
    });
  if (input.kind === 'location_request') return { kind: 'location_request', body: input.body };
  if (input.kind === 'contact_request') return { kind: 'contact_request', body: input.body };

  if (!input.button) issues.push({ field: 'interactive.button', issue: 'is required with kind cta_url' });
  else if (!isHttps(input.button.url))
    issues.push({ field: 'interactive.button.url', issue: 'must be an https link' });
  return {
    kind: 'cta_url',
    ...(input.header ? { header: input.header } : {}),
    body: input.body,
    ...(input.footer ? { footer: input.footer } : {}),
    button: input.button ?? { text: '', url: '' },
  };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A YYYY-MM-DD that names a day of the calendar (not 2001-02-30). */
function isCalendarDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
}

/** Contact cards in Meta's shape: what the schema cannot check. */
export function contactsIssues(contacts: ContactCard[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  contacts.forEach((card, i) => {
    const at = `contacts[${i}]`;
    if (card.name.formatted_name.trim() === '')
      issues.push({ field: `${at}.name.formatted_name`, issue: 'must not be blank' });
    if (card.birthday !== undefined && !isCalendarDate(card.birthday))
      issues.push({ field: `${at}.birthday`, issue: 'must be a date as YYYY-MM-DD' });
    card.emails?.forEach((e, j) => {
      if (e.email === undefined || !EMAIL.test(e.email))
        issues.push({ field: `${at}.emails[${j}].email`, issue: 'must be an email address' });
    });
    card.urls?.forEach((u, j) => {
      if (u.url === undefined || !/^https?:\/\/\S+$/i.test(u.url))
        issues.push({ field: `${at}.urls[${j}].url`, issue: 'must be an http or https link' });
    });
    card.phones?.forEach((p, j) => {
      if (p.phone === undefined && p.wa_id === undefined)
        issues.push({ field: `${at}.phones[${j}]`, issue: 'needs phone or wa_id' });
    });
    card.addresses?.forEach((a, j) => {
      if (a.country_code !== undefined && !/^[A-Za-z]{2}$/.test(a.country_code))
        issues.push({
          field: `${at}.addresses[${j}].country_code`,
          issue: 'must be a two-letter ISO country code',
        });
    });
  });
  return issues;
}
