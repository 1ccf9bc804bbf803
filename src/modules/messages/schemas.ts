// How messages look on the wire: the fields that say what to send (shared by POST /messages, the
// estimate and bulk sends), and the message resource.
import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { MoneySchema, NullableTimestamp, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { WHATSAPP_USER_ID_PATTERN } from '../../kernel/values/whatsapp-user-ids.ts';
import { PricingRuleSchema } from '../pricing/index.ts';

export const Phone = Type.String({
  minLength: 1,
  maxLength: 40,
  description:
    'E.164 with the leading +, e.g. +14155550123 (a number without a country code is read as the account’s country’s).',
  examples: ['+14155550123'],
});

/** The three ways of naming a recipient; a request gives exactly one. */
export const recipientFields = {
  to: Type.Optional(Phone),
  contactId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'Instead of `to`: a contact of the account, written to at its number (or, when it has none, at its WhatsApp user id).',
    }),
  ),
  whatsappUserId: Type.Optional(
    Type.String({
      pattern: WHATSAPP_USER_ID_PATTERN,
      maxLength: 131,
      description:
        "Instead of `to`: Meta's business-scoped user id of a customer (`US.13491208655302741918`), for one who did not share their number.",
      examples: ['US.13491208655302741918'],
    }),
  ),
};

const Parameters = Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
  maxItems: 100,
  description:
    "The template's positional parameters, in order: the header's placeholder (if any), then the body's {{1}}…{{n}}, then one per URL button with a placeholder. No new lines, tabs or more than 4 spaces in a row.",
});

/** A NAMED template's values, by placeholder name (POST /messages, estimates and bulk sends). */
const NamedParameters = Type.Record(
  Type.String({ pattern: '^[a-z][a-z0-9_]*$' }),
  Type.String({ minLength: 1, maxLength: 1024 }),
  {
    maxProperties: 100,
    description:
      'A NAMED template\'s values by placeholder name, e.g. {"first_name": "Ada"}: every placeholder, and no other name.',
  },
);

/** Positional values (a list) or a NAMED template's values (an object). */
export const SendParameters = Type.Union([Parameters, NamedParameters], {
  description:
    'The template\'s values: a list in order for a POSITIONAL template (header, body {{1}}…{{n}}, URL buttons), an object by name for a NAMED one ({"first_name": "Ada"}). No new lines, tabs or more than 4 spaces in a row.',
});

export const ButtonPayloads = Type.Array(
  Type.Object(
    {
      index: Type.Integer({
        minimum: 0,
        maximum: 9,
        description:
          "The button's position in the template's BUTTONS component, from 0: a QUICK_REPLY button.",
      }),
      payload: Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'Comes back as the `button.payload` of the customer’s inbound message when they tap it.',
      }),
    },
    { additionalProperties: false },
  ),
  {
    maxItems: 10,
    description:
      "Template sends: the payload of each QUICK_REPLY button named, for this message (kept with it; a retry sends the same). Buttons left out carry Meta's default payload (their text).",
  },
);

/** What a template send takes beyond the shared fields (POST /messages, estimates, bulk sends). */
export const templateSendFields = {
  parameters: Type.Optional(SendParameters),
  buttonPayloads: Type.Optional(ButtonPayloads),
};

const MediaSchema = Type.Object(
  {
    kind: Type.Union(
      [
        Type.Literal('image'),
        Type.Literal('video'),
        Type.Literal('audio'),
        Type.Literal('document'),
        Type.Literal('sticker'),
      ],
      { description: 'sticker: a webp image (static ≤ 100 KB, animated ≤ 500 KB), no caption or filename.' },
    ),
    url: Type.Optional(
      Type.String({
        format: 'uri',
        maxLength: 2000,
        description: 'A public http(s) link to the file; or give `id` instead.',
      }),
    ),
    id: Type.Optional(
      Type.String({
        maxLength: 100,
        description:
          'An upload of the account (POST /media), of this kind, instead of `url`. Not for bulk sends, campaigns or automation, which take `url`.',
        examples: ['med_01jv0000000000000000000000'],
      }),
    ),
    caption: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, description: 'Not for audio or stickers.' }),
    ),
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: 240, description: 'Documents only.' })),
  },
  { additionalProperties: false },
);

const InteractiveSchema = Type.Object(
  {
    kind: Type.Union(
      [
        Type.Literal('buttons'),
        Type.Literal('list'),
        Type.Literal('cta_url'),
        Type.Literal('location_request'),
        Type.Literal('contact_request'),
      ],
      {
        description:
          'buttons: 1–3 reply buttons; list: a menu of rows; cta_url: one button that opens `button.url`; location_request: the body and WhatsApp’s “Send location” button (no header or footer); contact_request: the body and WhatsApp’s “Share contact info” button, asking a customer who wrote without their number for it (Meta’s request_contact_info; their answer is a contacts message of origin contact_request).',
      },
    ),
    header: Type.Optional(Type.String({ minLength: 1, maxLength: 60 })),
    body: Type.String({
      minLength: 1,
      maxLength: 4096,
      description:
        'Up to 1024 characters with buttons, cta_url, location_request and contact_request, 4096 with a list.',
    }),
    footer: Type.Optional(Type.String({ minLength: 1, maxLength: 60 })),
    buttons: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.String({ minLength: 1, maxLength: 256, description: 'Comes back in the reply.' }),
            title: Type.String({ minLength: 1, maxLength: 20 }),
          },
          { additionalProperties: false },
        ),
        {
          minItems: 1,
          maxItems: 3,
          description: 'kind buttons: 1–3 reply buttons, distinct ids and titles.',
        },
      ),
    ),
    buttonText: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 20,
        description: 'kind list: the label of the button that opens the list.',
      }),
    ),
    sections: Type.Optional(
      Type.Array(
        Type.Object(
          {
            title: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 24,
                description: 'Required with more than one section.',
              }),
            ),
            rows: Type.Array(
              Type.Object(
                {
                  id: Type.String({ minLength: 1, maxLength: 200 }),
                  title: Type.String({ minLength: 1, maxLength: 24 }),
                  description: Type.Optional(Type.String({ minLength: 1, maxLength: 72 })),
                },
                { additionalProperties: false },
              ),
              { minItems: 1, maxItems: 10 },
            ),
          },
          { additionalProperties: false },
        ),
        {
          minItems: 1,
          maxItems: 10,
          description: 'kind list: 1–10 sections, at most 10 rows in all, distinct row ids.',
        },
      ),
    ),
    button: Type.Optional(
      Type.Object(
        {
          text: Type.String({ minLength: 1, maxLength: 20, description: 'The button’s label.' }),
          url: Type.String({ format: 'uri', maxLength: 2000, description: 'An https link it opens.' }),
        },
        { additionalProperties: false, description: 'kind cta_url: the button and the link it opens.' },
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Reply buttons (kind buttons), a list (kind list), a link button (kind cta_url) or a location request (kind location_request), as WhatsApp shows them.',
  },
);

const LocationSchema = Type.Object(
  {
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'The place’s name.' })),
    address: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false, description: 'type location: a pin on the map.' },
);

const cardText = (maxLength = 500) => Type.Optional(Type.String({ minLength: 1, maxLength }));
const cardList = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Optional(Type.Array(item, { minItems: 1, maxItems: 20 }));

/** A contact card in the WhatsApp Cloud API's own shape (snake_case), sent to Meta as it is. */
const ContactCardSchema = Type.Object(
  {
    name: Type.Object(
      {
        formatted_name: Type.String({
          minLength: 1,
          maxLength: 500,
          description: 'Required: the name the message shows.',
        }),
        first_name: cardText(),
        last_name: cardText(),
        middle_name: cardText(),
        suffix: cardText(),
        prefix: cardText(),
      },
      { additionalProperties: false },
    ),
    phones: cardList(
      Type.Object(
        {
          phone: cardText(40),
          wa_id: Type.Optional(
            Type.String({ pattern: '^[0-9]{5,20}$', description: 'The WhatsApp id (digits): adds Message.' }),
          ),
          type: cardText(20),
        },
        { additionalProperties: false, description: '`phone` or `wa_id`; type e.g. CELL, HOME, WORK.' },
      ),
    ),
    emails: cardList(
      Type.Object({ email: cardText(320), type: cardText(20) }, { additionalProperties: false }),
    ),
    urls: cardList(Type.Object({ url: cardText(2000), type: cardText(20) }, { additionalProperties: false })),
    addresses: cardList(
      Type.Object(
        {
          street: cardText(),
          city: cardText(),
          state: cardText(),
          zip: cardText(20),
          country: cardText(),
          country_code: cardText(2),
          type: cardText(20),
        },
        { additionalProperties: false },
      ),
    ),
    org: Type.Optional(
      Type.Object(
        { company: cardText(), department: cardText(), title: cardText() },
        { additionalProperties: false },
      ),
    ),
    birthday: Type.Optional(Type.String({ description: 'YYYY-MM-DD.', examples: ['1990-04-23'] })),
  },
  { additionalProperties: false },
);

const ContactsSchema = Type.Array(ContactCardSchema, {
  minItems: 1,
  maxItems: 257,
  description:
    'type contacts: 1–257 contact cards in the WhatsApp Cloud API’s own shape (`name.formatted_name` required; phones, emails, urls, addresses, org, birthday as Meta defines them).',
});

const MessageRef = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'A message of the account (`msg_…`), either direction, that the provider has an id for.',
});

const ReactionSchema = Type.Object(
  {
    messageId: MessageRef,
    emoji: Type.String({
      maxLength: 40,
      description: 'One emoji; an empty string removes the business’s reaction.',
      examples: ['👍'],
    }),
  },
  {
    additionalProperties: false,
    description:
      'type reaction: an emoji on an earlier message of the same chat (at most 30 days old, not itself a reaction).',
  },
);

const QuoteSchema = Type.Object(
  { messageId: MessageRef },
  {
    additionalProperties: false,
    description:
      'A quoted reply: WhatsApp shows the earlier message (of the same chat) above this one. Any type but reaction.',
  },
);

/** A message's media as shown: what was sent (`url`), or what a customer sent (`id` and its details). */
const MediaView = Type.Object({
  kind: Type.String({ description: 'image, video, audio, document or sticker.' }),
  url: Type.Optional(Type.String({ description: 'Outbound: the link sent.' })),
  id: Type.Optional(
    Type.String({
      description:
        "Inbound: the provider's media id (GET /messages/{id}/media gives the file). Outbound: the upload sent (med_…).",
    }),
  ),
  mimeType: Type.Optional(nullable(Type.String())),
  sha256: Type.Optional(nullable(Type.String())),
  caption: Type.Optional(nullable(Type.String())),
  filename: Type.Optional(nullable(Type.String())),
  voice: Type.Optional(Type.Boolean({ description: 'Inbound audio: recorded as a voice note.' })),
  animated: Type.Optional(Type.Boolean({ description: 'Inbound sticker: animated.' })),
});

/** An interactive message as shown: what was sent (buttons, list), or the customer's tap on one. */
const InteractiveView = Type.Object({
  ...Type.Partial(InteractiveSchema).properties,
  kind: Type.String({ description: 'Outbound: buttons or list. Inbound: button_reply or list_reply.' }),
  id: Type.Optional(Type.String({ description: 'Inbound: the id of the button or row tapped.' })),
  title: Type.Optional(Type.String({ description: 'Inbound: its title.' })),
  description: Type.Optional(
    nullable(Type.String({ description: 'Inbound list_reply: the row’s description.' })),
  ),
});

/** What to send, without the recipient. */
export const messageFields = {
  type: Type.Optional(
    Type.Union(
      [
        Type.Literal('template'),
        Type.Literal('text'),
        Type.Literal('media'),
        Type.Literal('interactive'),
        Type.Literal('location'),
        Type.Literal('contacts'),
      ],
      {
        description: 'Left out: template when templateName is given.',
      },
    ),
  ),
  templateName: Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: 'An approved template of the account.' }),
  ),
  templateLanguage: Type.Optional(Type.String({ minLength: 2, maxLength: 15, examples: ['en_US'] })),
  parameters: Type.Optional(Parameters),
  text: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'type text: the message.' })),
  previewUrl: Type.Optional(Type.Boolean({ description: 'type text: show a preview of the first link.' })),
  media: Type.Optional(MediaSchema),
  interactive: Type.Optional(InteractiveSchema),
  location: Type.Optional(LocationSchema),
  contacts: Type.Optional(ContactsSchema),
};

/**
 * What one send to one chat takes besides: a reaction and a quoted reply, which name an earlier
 * message of that chat (POST /messages and a conversation's reply; not bulk sends or automations).
 */
export const chatSendFields = {
  ...messageFields,
  type: Type.Optional(
    Type.Union(
      [
        Type.Literal('template'),
        Type.Literal('text'),
        Type.Literal('media'),
        Type.Literal('interactive'),
        Type.Literal('location'),
        Type.Literal('contacts'),
        Type.Literal('reaction'),
      ],
      { description: 'Left out: template when templateName is given.' },
    ),
  ),
  reaction: Type.Optional(ReactionSchema),
  context: Type.Optional(QuoteSchema),
};

/** Send later: POST /messages and a conversation's reply (not bulk sends, campaigns or automations). */
export const scheduleFields = {
  sendAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'Send later: when the message is to go, at most 30 days ahead. It is `scheduled` until then (not charged, the window not checked), cancellable with POST /messages/{id}/cancel; at its time it is priced, charged and checked against the customer service window as a send of that moment (closed: `failed` with `CSW_VIOLATION`). A time within the next 10 seconds, or up to a minute past, is a send now; earlier is 422.',
      examples: ['2026-12-24T09:00:00Z'],
    }),
  ),
};

export const SendMessageBody = Type.Object(
  { ...recipientFields, ...chatSendFields, ...templateSendFields, ...scheduleFields },
  {
    additionalProperties: false,
    description:
      'The recipient by exactly one of `to` (a number), `contactId` or `whatsappUserId` (below, `to` stands for any of them). A template `{to, templateName, templateLanguage, parameters}`, or free-form (only inside the customer service window): `{to, type:"text", text}`, `{to, type:"media", media}`, `{to, type:"interactive", interactive}`, `{to, type:"location", location}`, `{to, type:"contacts", contacts}`, `{to, type:"reaction", reaction}`. `context` quotes an earlier message.',
  },
);

export const RecipientSchema = Type.Object(
  {
    ...recipientFields,
    parameters: Type.Optional({
      ...SendParameters,
      description: "This recipient's template parameters (replace the top-level ones).",
    }),
  },
  { additionalProperties: false },
);

export const ErrorInfo = Type.Object({
  code: Type.String(),
  message: Type.String(),
  providerCode: Type.Optional(
    nullable(Type.Integer({ description: "The provider's own code (Meta's error code)." })),
  ),
  details: Type.Optional(
    Type.Array(Type.Object({ field: Type.String(), issue: Type.String() }, { additionalProperties: true })),
  ),
});

export const PricingSchema = Type.Object({
  country: nullable(Type.String({ description: "The recipient's country, from the number." })),
  category: Type.Union(
    [
      Type.Literal('marketing'),
      Type.Literal('utility'),
      Type.Literal('authentication'),
      Type.Literal('service'),
    ],
    { description: "The template's category, or service for a free-form message." },
  ),
  listPrice: MoneySchema,
  charged: MoneySchema,
  freeReason: nullable(
    Type.Union([Type.Literal('customer_service_window'), Type.Literal('sandbox')], {
      description: 'Why a message with a list price was not charged.',
    }),
  ),
  refunded: Type.Boolean({
    description: 'The charge was given back: the message failed without being delivered.',
  }),
  rule: Type.Union([PricingRuleSchema, Type.Null()], {
    description:
      "The price book's rule that set the charge; null on a message priced before the book had rules.",
  }),
  adjusted: {
    ...MoneySchema,
    description:
      'What settling the charge with what the provider bills moved, signed (positive: taken from the wallet): a message refunded on failure that the provider then delivered and billed is charged again; a charged one it did not bill is paid back. What the message costs = charged − the refund + adjusted.',
  },
  unpaid: {
    ...MoneySchema,
    description:
      'The part of an adjustment the wallet could not pay (it never goes below zero); not asked for again.',
  },
});

export const MessageStatusSchema = Type.Union(
  [
    Type.Literal('scheduled'),
    Type.Literal('queued'),
    Type.Literal('sent'),
    Type.Literal('delivered'),
    Type.Literal('read'),
    Type.Literal('failed'),
    Type.Literal('canceled'),
    Type.Literal('received'),
  ],
  {
    description:
      'Outbound: queued → sent → delivered → read, or failed (see error); a delivery reported after a failure is recorded (failed → delivered). Sent with `sendAt`: scheduled until then, and then queued (or failed), or canceled (POST /messages/{id}/cancel). Inbound: received.',
  },
);

export const MessageSchema = Type.Object(
  {
    id: Type.String({ examples: ['msg_01jv4e2k7qf3x8m2n5p6r9s0tb'] }),
    direction: Type.Union([Type.Literal('outbound'), Type.Literal('inbound')]),
    type: Type.String({
      description:
        'Outbound: template, text, media, interactive, location, contacts or reaction. Inbound: text, media, interactive (a reply button or list row tapped), button (a template quick reply tapped), reaction, location, contacts, or unsupported (a type Tidings does not model, kept whole).',
    }),
    to: nullable(
      Type.String({ description: 'Outbound: the number it went to (null: sent by WhatsApp user id).' }),
    ),
    from: nullable(
      Type.String({ description: "Inbound: the sender's number (null: the customer did not share it)." }),
    ),
    whatsappUserId: nullable(
      Type.String({
        description:
          "The customer's WhatsApp user id: what an outbound message was sent to when it went by user id, and the sender's as Meta reported it on an inbound one.",
      }),
    ),
    contactId: nullable(Type.String()),
    conversationId: nullable(
      Type.String({
        description: 'The conversation it belongs to; null for one sent while the contact had none open.',
      }),
    ),
    status: MessageStatusSchema,
    template: nullable(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        language: Type.String(),
        category: Type.String(),
        parameters: Type.Union([Type.Array(Type.String()), Type.Record(Type.String(), Type.String())], {
          description: 'A list (POSITIONAL template), or an object by name (NAMED template).',
        }),
        body: Type.String({ description: 'The body with the parameters filled in.' }),
        buttonPayloads: Type.Optional(ButtonPayloads),
      }),
    ),
    text: nullable(Type.String()),
    media: nullable(MediaView),
    interactive: nullable(InteractiveView),
    button: nullable(
      Type.Object(
        { text: Type.String(), payload: nullable(Type.String()) },
        { description: 'Inbound type button.' },
      ),
    ),
    reaction: nullable(
      Type.Object(
        {
          messageId: nullable(
            Type.String({ description: 'The message reacted to, when it is one of ours.' }),
          ),
          providerMessageId: nullable(
            Type.String({
              description:
                "The provider's id of the message reacted to (null: a sandbox message not handed over).",
            }),
          ),
          emoji: Type.String({ description: 'Empty: the reaction was removed.' }),
        },
        { description: 'Type reaction, either direction.' },
      ),
    ),
    location: nullable(
      Type.Object(
        {
          latitude: Type.Number(),
          longitude: Type.Number(),
          name: nullable(Type.String()),
          address: nullable(Type.String()),
          url: nullable(Type.String()),
        },
        { description: 'Type location, either direction.' },
      ),
    ),
    contacts: nullable(
      Type.Array(Type.Object({}, { additionalProperties: true }), {
        description:
          'Type contacts, either direction: the cards in WhatsApp’s own shape (name, phones, emails, org, …).',
      }),
    ),
    unsupported: nullable(
      Type.Object(
        {
          providerType: Type.String({ description: "The provider's type for it (order, system, …)." }),
          raw: Type.Unknown({ description: "The provider's message, whole." }),
        },
        { description: 'Inbound type unsupported.' },
      ),
    ),
    context: nullable(
      Type.Object(
        {
          messageId: nullable(Type.String({ description: 'The message answered, when it is one of ours.' })),
          providerMessageId: nullable(
            Type.String({
              description: "The provider's id of the message answered; null when it answers none.",
            }),
          ),
          forwarded: Type.Boolean({ description: 'The customer forwarded this message.' }),
          frequentlyForwarded: Type.Boolean({
            description: 'The message has been forwarded many times (WhatsApp marks it so).',
          }),
          referredProduct: nullable(
            Type.Object(
              { catalogId: Type.String(), productRetailerId: Type.String() },
              {
                description: 'The catalog product the customer asks about ("Message business" on a product).',
              },
            ),
          ),
        },
        {
          description:
            'The message this one answers: inbound, a reply or a button tapped (with whether it was forwarded and the product it asks about); outbound, the message quoted (`context.messageId` of the send).',
        },
      ),
    ),
    referral: nullable(
      Type.Object(
        {
          sourceUrl: nullable(Type.String()),
          sourceId: nullable(Type.String({ description: 'The ad or post id.' })),
          sourceType: nullable(Type.String({ description: 'ad or post.' })),
          headline: nullable(Type.String()),
          body: nullable(Type.String()),
          mediaType: nullable(Type.String({ description: 'image or video.' })),
          imageUrl: nullable(Type.String()),
          videoUrl: nullable(Type.String()),
          thumbnailUrl: nullable(Type.String()),
          ctwaClid: nullable(Type.String({ description: 'The click id, for Meta’s Conversions API.' })),
          welcomeMessage: nullable(
            Type.String({ description: 'The greeting the ad showed before they wrote.' }),
          ),
        },
        { description: 'Inbound: the click-to-WhatsApp ad (or post) the customer came from.' },
      ),
    ),
    source: nullable(
      Type.Union(
        [
          Type.Literal('api'),
          Type.Literal('automation'),
          Type.Literal('campaign'),
          Type.Literal('business_app'),
        ],
        {
          description:
            'Who sent an outbound message: the API (and the console), automation (a rule, sequence or journey), a campaign, or the WhatsApp Business app of a coexistence number (echoed by Meta: never charged, never sent by Tidings). Null for a customer’s message.',
        },
      ),
    ),
    channel: Type.Union([Type.Literal('sandbox'), Type.Literal('whatsapp_cloud')], {
      description: 'The provider that carries it.',
    }),
    sandbox: Type.Boolean({
      description:
        'Sent with a sandbox key (or by automation a sandbox key or sandbox event started; inbound: played with a sandbox key): simulated whatever the channel, never charged. A live key’s message on the sandbox channel is simulated too but says false (`channel` says who carried it), as a call does.',
    }),
    providerMessageId: nullable(Type.String({ description: "The provider's id (WhatsApp's wamid)." })),
    pricing: nullable(PricingSchema),
    providerPricing: nullable(
      Type.Object(
        {
          billable: nullable(Type.Boolean({ description: 'Whether the provider bills it; null: not said.' })),
          model: nullable(Type.String({ description: 'PMP (per message) or CBP (per conversation).' })),
          category: nullable(Type.String()),
          type: nullable(
            Type.String({ description: 'regular, free_customer_service or free_entry_point (PMP).' }),
          ),
        },
        {
          description: 'Outbound: what the provider reports it bills for this message (WhatsApp’s pricing).',
        },
      ),
    ),
    providerConversation: nullable(
      Type.Object(
        {
          id: Type.String(),
          origin: nullable(Type.String({ description: 'What opened it: marketing, utility, service, …' })),
          expiresAt: NullableTimestamp,
        },
        {
          description: 'Outbound: the provider’s conversation it was counted in (per-conversation pricing).',
        },
      ),
    ),
    error: nullable(ErrorInfo),
    bulkJobId: nullable(Type.String()),
    createdAt: Timestamp,
    acceptedAt: {
      ...NullableTimestamp,
      description:
        'Outbound: when the provider accepted the hand-over. Accepted is not sent: the message stays queued until the provider says it sent it (sentAt, its time).',
    },
    providerStatus: nullable(
      Type.String({
        description:
          "Outbound: the provider's word on the hand-over (WhatsApp's message_status of a template send: accepted, held_for_quality_assessment, paused).",
      }),
    ),
    sendAt: {
      ...NullableTimestamp,
      description: 'Sent with `sendAt`: when it is (or was) to go; null for a message sent at once.',
    },
    sentAt: NullableTimestamp,
    deliveredAt: NullableTimestamp,
    readAt: NullableTimestamp,
    failedAt: NullableTimestamp,
    markedReadAt: {
      ...NullableTimestamp,
      description:
        'Inbound: when the business first marked it read (POST /messages/{id}/read, or a later message of the chat marked read); WhatsApp showed the customer blue ticks.',
    },
    typingShownAt: {
      ...NullableTimestamp,
      description:
        'Inbound: when the typing indicator was last shown to the customer for it (POST /messages/{id}/read with typing); it lasts until the next message, or 25 seconds.',
    },
    playedAt: Type.Union([Timestamp, Type.Null()], {
      description:
        "When the recipient played it: a voice message (or audio), WhatsApp's `played` status. Its status stays `read`.",
    }),
    updatedAt: Timestamp,
  },
  { title: 'Message' },
);

export const MessageIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const MessageListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(MessageStatusSchema),
    direction: Type.Optional(Type.Union([Type.Literal('outbound'), Type.Literal('inbound')])),
    to: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: "The customer's number (either direction)." }),
    ),
    createdAfter: Type.Optional(Type.String({ format: 'date-time' })),
    createdBefore: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export const EstimateBody = Type.Object(
  {
    ...recipientFields,
    recipients: Type.Optional(
      Type.Array(RecipientSchema, {
        minItems: 1,
        maxItems: 1000,
        description:
          'Instead of `to` (or `contactId`, `whatsappUserId`): price a list (each may bring its own template parameters).',
      }),
    ),
    ...messageFields,
    ...templateSendFields,
  },
  {
    additionalProperties: false,
    description:
      'The body of POST /messages (one `to`), or its fields with `recipients` (a list): nothing is sent or charged.',
  },
);

export const EstimateSchema = Type.Object(
  {
    recipients: Type.Array(
      Type.Object({
        index: Type.Integer({ description: 'Position in `recipients` (0 for `to`).' }),
        to: Type.String({ description: 'The address priced: a number, or a WhatsApp user id.' }),
        country: nullable(Type.String()),
        category: nullable(Type.String({ description: 'marketing, utility, authentication or service.' })),
        unitPrice: MoneySchema,
        charge: {
          ...MoneySchema,
          description: 'What the send would take from the wallet, after the free rules.',
        },
        liveCharge: {
          ...MoneySchema,
          description:
            'What the send would take on a live channel (WhatsApp Cloud API), with the same service-window rules: what the sandbox’s 0 stands for. Equal to `charge` off the sandbox.',
        },
        freeReason: nullable(Type.String({ description: 'customer_service_window or sandbox.' })),
        rule: Type.Union([PricingRuleSchema, Type.Null()], {
          description: "The price book's rule the send would be charged by (null with an error).",
        }),
        error: nullable(ErrorInfo),
      }),
    ),
    total: { ...MoneySchema, description: 'The sum of the charges.' },
    liveTotal: {
      ...MoneySchema,
      description: 'The sum of the `liveCharge`s: what this would cost on a live channel.',
    },
    balance: MoneySchema,
    sufficient: Type.Boolean({ description: 'Whether the balance pays for the total now.' }),
    channel: Type.String({
      description: 'The provider the send would go through (sandbox for a sandbox key).',
    }),
  },
  { title: 'Estimate' },
);

export const MarkReadBody = Type.Object(
  {
    typing: Type.Optional(
      Type.Boolean({
        description:
          'Also show the customer the typing indicator (until your next message, or 25 seconds). Only when you are about to answer.',
      }),
    ),
  },
  { additionalProperties: false },
);

const AdjustmentTotals = {
  adjustments: Type.Integer({ description: 'Adjustment transactions made in the period.' }),
  messages: Type.Integer({ description: 'The messages they settled.' }),
  taken: { ...MoneySchema, description: 'Taken from the wallet: Meta billed what the book priced lower.' },
  givenBack: { ...MoneySchema, description: 'Paid back: Meta did not bill what the book charged.' },
  net: { ...MoneySchema, description: 'taken − givenBack.' },
};

export const AdjustmentsReportSchema = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    ...AdjustmentTotals,
    byRule: Type.Array(
      Type.Object({
        rule: Type.Union([PricingRuleSchema, Type.Null()], {
          description:
            'The rule that priced the messages; null for messages priced before the book had rules.',
        }),
        ...AdjustmentTotals,
      }),
      { description: "Per price-book rule of the messages settled, in the rules' order." },
    ),
  },
  { title: 'PricingAdjustments' },
);
