import { Type } from 'typebox';
import { type ChannelConfig, throughputOf } from '../../channels/settings.ts';
import { NullableTimestamp, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { RECONNECT_STEP } from './signals.ts';

const Delay = (max: number, description: string) => Type.Integer({ minimum: 0, maximum: max, description });

const SandboxSettingsSchema = Type.Object(
  {
    deliveredAfterMs: Delay(600_000, 'From hand-over (`sent`) to `delivered`, in ms (default 1000).'),
    readAfterMs: nullable(
      Delay(600_000, 'From `delivered` to `read`, in ms (default 2000); null: never read.'),
    ),
    reviewAfterMs: Delay(
      86_400_000,
      'From a template submission to its review decision, in ms (default 2000).',
    ),
  },
  {
    description:
      'How the sandbox simulates a provider, for the account on the sandbox channel and for every sandbox key.',
  },
);

const SyncSchema = Type.Object({
  status: Type.Union(
    [
      Type.Literal('requested'),
      Type.Literal('unknown'),
      Type.Literal('refused'),
      Type.Literal('importing'),
      Type.Literal('complete'),
      Type.Literal('declined'),
    ],
    {
      description:
        'requested: Meta took the request; unknown: its answer was lost (Meta takes a sync once: not asked again); refused: Meta said no (`message`); importing, complete: the history as it arrives; declined: the business turned history sharing off.',
    },
  ),
  requestId: nullable(Type.String({ description: "Meta's request id, for Meta's support." })),
  requestedAt: Timestamp,
  providerCode: Type.Optional(nullable(Type.Integer())),
  message: Type.Optional(nullable(Type.String())),
  progress: Type.Optional(nullable(Type.Integer({ description: 'The history: 0–100, as Meta reports it.' }))),
  phase: Type.Optional(
    nullable(Type.Integer({ description: 'The history: 0 (day 0–1), 1 (1–90), 2 (90–180).' })),
  ),
  messages: Type.Optional(Type.Integer({ description: 'The history: messages imported so far.' })),
  updatedAt: Type.Optional(Timestamp),
});

export const ChannelSchema = Type.Object(
  {
    provider: Type.Union([Type.Literal('sandbox'), Type.Literal('whatsapp_cloud')], {
      description: 'Who carries live messages: the sandbox (simulated, free) or the WhatsApp Cloud API.',
    }),
    state: Type.Union([Type.Literal('sandbox'), Type.Literal('connected'), Type.Literal('needs_reconnect')], {
      description:
        'sandbox: no number yet; connected: a WhatsApp number carries live messages; needs_reconnect: Meta refused the number’s token, its messages fail until it is connected again (`nextStep` says how).',
    }),
    nextStep: nullable(
      Type.String({ description: 'What to do next, in words (null when nothing is needed).' }),
    ),
    sandbox: SandboxSettingsSchema,
    whatsapp: nullable(
      Type.Object({
        phoneNumberId: Type.String(),
        businessAccountId: Type.String(),
        displayPhoneNumber: nullable(Type.String({ description: 'As Meta reported it when saved.' })),
        verifiedName: nullable(Type.String()),
        throughputPerSecond: Type.Integer({
          description:
            'Messages a second the number takes, from its throughput level when saved (standard 80, high 1,000); campaigns never send faster.',
        }),
        messagingLimitTier: nullable(
          Type.String({
            description:
              'Meta’s messaging limit tier, when saved and as `phone_number_quality_update` reports it (TIER_250, TIER_1K, TIER_10K, TIER_100K, TIER_UNLIMITED): unique customers a business may message in 24 hours; campaigns keep within it. Null: not reported.',
          }),
        ),
        qualityRating: nullable(
          Type.String({
            description:
              'Meta’s quality rating of the number (GREEN, YELLOW, RED, UNKNOWN): read when the channel is saved and again after each `phone_number_quality_update`. Null: not read yet.',
          }),
        ),
        lastQualityEvent: nullable(
          Type.Object(
            {
              event: Type.String({
                description: 'FLAGGED, UNFLAGGED, UPGRADE, DOWNGRADE, THROUGHPUT_UPGRADE, ONBOARDING, …',
              }),
              currentLimit: nullable(Type.String()),
              previousLimit: nullable(Type.String()),
              maxDailyConversations: nullable(Type.String()),
              at: Timestamp,
            },
            { description: 'The last `phone_number_quality_update` Meta sent for the number.' },
          ),
        ),
        lastAccountUpdate: nullable(
          Type.Object(
            {
              event: Type.String({
                description:
                  'VERIFIED_ACCOUNT, DISABLED_UPDATE, ACCOUNT_VIOLATION, ACCOUNT_RESTRICTION, ACCOUNT_DELETED, …',
              }),
              details: Type.Record(Type.String(), Type.Unknown(), {
                description: '`ban_info`, `restriction_info`, `violation_info`, … as Meta sent them.',
              }),
              at: Timestamp,
            },
            { description: 'The last `account_update` Meta sent for the business account.' },
          ),
        ),
        lastError: nullable(
          Type.Object(
            {
              providerCode: nullable(Type.Integer()),
              title: Type.String(),
              message: Type.String(),
              details: nullable(Type.String()),
              at: Timestamp,
            },
            { description: 'The last error of the `errors` webhook field (about the number or the app).' },
          ),
        ),
        appId: nullable(Type.String({ description: 'The Meta app the number’s token is of, when given.' })),
        needsReconnect: nullable(
          Type.Object(
            {
              since: Timestamp,
              providerCode: nullable(Type.Integer()),
              message: Type.String(),
            },
            { description: 'When and why Meta refused the token (a send answered 190); null: it has not.' },
          ),
        ),
        syncs: nullable(
          Type.Object(
            { contacts: nullable(SyncSchema), history: nullable(SyncSchema) },
            {
              description:
                "A coexistence number's syncs of its WhatsApp Business app: its contacts, and its last six months of chats (with the import's progress). Null: not a coexistence number.",
            },
          ),
        ),
        onboarding: nullable(
          Type.Object(
            {
              via: Type.Literal('embedded_signup'),
              mode: Type.Union([Type.Literal('cloud_api'), Type.Literal('coexistence')], {
                description:
                  'cloud_api: registered for the Cloud API by Tidings; coexistence: the number stays on the WhatsApp Business app as well.',
              }),
              at: Timestamp,
            },
            {
              description:
                'How the number was connected: through Embedded Signup (POST /account/channel/embedded-signup). Null: with a token given to PUT /account/channel.',
            },
          ),
        ),
        callbackUrl: Type.String({
          format: 'uri',
          description:
            'Set this as the webhook callback URL of your Meta app (with the verify token you gave), subscribed to `messages`, `message_template_status_update`, `message_template_quality_update`, `template_category_update`, `user_preferences`, `phone_number_quality_update`, `account_update`.',
        }),
      }),
    ),
    updatedAt: NullableTimestamp,
  },
  { title: 'Channel' },
);

export const PutChannelBody = Type.Object(
  {
    provider: Type.Union([Type.Literal('sandbox'), Type.Literal('whatsapp_cloud')]),
    whatsapp: Type.Optional(
      Type.Object(
        {
          phoneNumberId: Type.String({
            pattern: '^[0-9]{1,32}$',
            description: 'The Phone Number ID in Meta.',
          }),
          businessAccountId: Type.String({
            pattern: '^[0-9]{1,32}$',
            description: 'The WhatsApp Business Account (WABA) ID: templates are submitted to it.',
          }),
          accessToken: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 4096,
              description:
                'A system-user access token with whatsapp_business_messaging and whatsapp_business_management. Write-only.',
            }),
          ),
          appSecret: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 256,
              description: "The Meta app's secret: callbacks are verified with it. Write-only.",
            }),
          ),
          verifyToken: Type.Optional(
            Type.String({
              minLength: 8,
              maxLength: 256,
              description:
                'The verify token you enter in the Meta app for the callback handshake. Write-only.',
            }),
          ),
          appId: Type.Optional(
            Type.String({
              pattern: '^[0-9]{1,32}$',
              description:
                "The Meta app the token is of: a profile photo is uploaded on it (Meta's resumable upload). Not needed when the account's partner has set its app. Left out: kept for the same number.",
            }),
          ),
        },
        {
          additionalProperties: false,
          description:
            "Required with provider whatsapp_cloud. The credentials may be left out when the same phone number and business account are already configured (the stored ones are kept); appSecret and verifyToken also when the account's partner has set its Meta app (PUT /partner/whatsapp-app).",
        },
      ),
    ),
    sandbox: Type.Optional(
      Type.Object(
        {
          deliveredAfterMs: Type.Optional(SandboxSettingsSchema.properties.deliveredAfterMs),
          readAfterMs: Type.Optional(SandboxSettingsSchema.properties.readAfterMs),
          reviewAfterMs: Type.Optional(SandboxSettingsSchema.properties.reviewAfterMs),
        },
        { additionalProperties: false, description: 'Left out, or a field left out: the default.' },
      ),
    ),
  },
  { additionalProperties: false },
);

export function callbackUrlOf(publicBaseUrl: string, accountId: string): string {
  return `${publicBaseUrl}/api/v1/callbacks/whatsapp/${accountId}`;
}

const CONNECT_STEP =
  'Connect a WhatsApp number: with Embedded Signup on your partner’s Meta app (GET /account/channel/embedded-signup), or with PUT /account/channel and an access token.';

function stateOf(channel: ChannelConfig) {
  if (channel.provider !== 'whatsapp_cloud' || !channel.whatsapp)
    return { state: 'sandbox' as const, nextStep: CONNECT_STEP };
  if (channel.whatsapp.needsReconnect) return { state: 'needs_reconnect' as const, nextStep: RECONNECT_STEP };
  return { state: 'connected' as const, nextStep: null };
}

export function toChannel(channel: ChannelConfig, publicBaseUrl: string, accountId: string) {
  return {
    provider: channel.provider,
    ...stateOf(channel),
    sandbox: channel.sandbox,
    whatsapp: channel.whatsapp
      ? {
          ...channel.whatsapp,
          throughputPerSecond: channel.whatsapp.throughputPerSecond ?? throughputOf(null),
          messagingLimitTier: channel.whatsapp.messagingLimitTier ?? null,
          qualityRating: channel.whatsapp.qualityRating ?? null,
          lastQualityEvent: channel.whatsapp.lastQualityEvent ?? null,
          lastAccountUpdate: channel.whatsapp.lastAccountUpdate ?? null,
          lastError: channel.whatsapp.lastError ?? null,
          appId: channel.whatsapp.appId ?? null,
          needsReconnect: channel.whatsapp.needsReconnect ?? null,
          syncs:
            channel.whatsapp.onboarding?.mode === 'coexistence'
              ? {
                  contacts: channel.whatsapp.syncs?.contacts ?? null,
                  history: channel.whatsapp.syncs?.history ?? null,
                }
              : null,
          onboarding: channel.whatsapp.onboarding ?? null,
          callbackUrl: callbackUrlOf(publicBaseUrl, accountId),
        }
      : null,
    updatedAt: channel.updatedAt?.toISOString() ?? null,
  };
}

export const DisconnectionSchema = Type.Object(
  {
    channel: ChannelSchema,
    release: Type.Object(
      {
        phoneNumberId: Type.String({ description: 'The number that was disconnected.' }),
        deregistered: Type.Boolean({ description: 'Meta deregistered the number from the Cloud API.' }),
        unsubscribed: Type.Boolean({
          description: "The partner's app no longer receives the WABA's webhooks.",
        }),
        metaError: nullable(
          Type.Object(
            {
              step: Type.Union([Type.Literal('deregister_number'), Type.Literal('unsubscribe_app')]),
              providerCode: nullable(Type.Integer()),
              message: Type.String(),
            },
            { description: 'A step Meta refused: the number is forgotten here all the same.' },
          ),
        ),
      },
      { description: 'What was released at Meta.' },
    ),
  },
  { title: 'ChannelDisconnection' },
);
