// The bodies providers POST to their callback URLs, for the OpenAPI document only: the routes read
// the bytes themselves (the signature covers them as sent) and parse them in the channel adapters,
// which accept what the providers send and more; these schemas say what to expect, not what is checked.
import { Type } from 'typebox';

const MetaChangeValue = Type.Object(
  {
    messaging_product: Type.Optional(Type.String({ examples: ['whatsapp'] })),
    metadata: Type.Optional(
      Type.Object(
        {
          display_phone_number: Type.String({ examples: ['15550001234'] }),
          phone_number_id: Type.String({
            description: 'The channel the change is for (the account’s `phone_number_id`).',
            examples: ['106540352242922'],
          }),
        },
        { additionalProperties: true },
      ),
    ),
    contacts: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    messages: Type.Optional(
      Type.Array(Type.Object({}, { additionalProperties: true }), {
        description: 'Customers’ messages (text, media, interactive replies, …) as Meta sends them.',
      }),
    ),
    statuses: Type.Optional(
      Type.Array(Type.Object({}, { additionalProperties: true }), {
        description: 'Status updates of sent messages: sent, delivered, read, failed (with `errors`).',
      }),
    ),
    event: Type.Optional(
      Type.String({ description: 'A template update: APPROVED, REJECTED, PAUSED, DISABLED, …' }),
    ),
    message_template_id: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
    message_template_name: Type.Optional(Type.String()),
    message_template_language: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'The change, in the shape Meta documents for its `field`.' },
);

export const MetaWebhookEnvelope = Type.Object(
  {
    object: Type.String({ examples: ['whatsapp_business_account'] }),
    entry: Type.Array(
      Type.Object(
        {
          id: Type.String({
            description: 'The WhatsApp Business Account id.',
            examples: ['102290129340398'],
          }),
          changes: Type.Array(
            Type.Object(
              {
                field: Type.String({
                  description:
                    '`messages` (messages and statuses), `message_template_status_update`, `message_template_quality_update`, `template_category_update`, …',
                  examples: ['messages'],
                }),
                value: MetaChangeValue,
              },
              { additionalProperties: true },
            ),
          ),
        },
        { additionalProperties: true },
      ),
    ),
  },
  {
    title: 'MetaWebhookEnvelope',
    additionalProperties: true,
    description:
      "Meta's WhatsApp Cloud API webhook envelope, as Meta sends it (https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components): entries of changes, each a `field` and its `value`. Signed with X-Hub-Signature-256 over the exact bytes.",
    examples: [
      {
        object: 'whatsapp_business_account',
        entry: [
          {
            id: '102290129340398',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: '15550001234', phone_number_id: '106540352242922' },
                  statuses: [
                    {
                      id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA',
                      status: 'delivered',
                      timestamp: '1767225600',
                      recipient_id: '14155552000',
                    },
                  ],
                },
              },
            ],
          },
        ],
      },
    ],
  },
);

export const TwilioVoiceForm = Type.Object(
  {
    CallSid: Type.Optional(Type.String({ examples: ['CA0123456789abcdef0123456789abcdef'] })),
    CallStatus: Type.Optional(
      Type.String({
        description: 'queued, initiated, ringing, in-progress, completed, busy, no-answer, failed, canceled',
      }),
    ),
    Digits: Type.Optional(Type.String({ description: 'A gather’s digits.' })),
  },
  {
    title: 'TwilioVoiceForm',
    additionalProperties: { type: 'string' },
    description:
      "Twilio's form-encoded voice callback parameters (signed with X-Twilio-Signature over the URL and the fields).",
  },
);
