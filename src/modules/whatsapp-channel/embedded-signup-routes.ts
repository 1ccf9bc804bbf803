// GET and POST /account/channel/embedded-signup: what a client needs to launch Meta's Embedded
// Signup on its partner's app, and the server's half of it (embedded-signup.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf } from '../../kernel/access/access.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { completeSignup, latestOnboarding } from './embedded-signup.ts';
import { STEP_NAMES } from './embedded-signup-errors.ts';
import { partnerAppOfAccount } from './partner-app.ts';
import type { ChannelContext } from './routes.ts';
import { ChannelSchema, toChannel } from './schemas.ts';

const Mode = Type.Union([Type.Literal('cloud_api'), Type.Literal('coexistence')], {
  description:
    "cloud_api (default): the number is registered for the Cloud API, and leaves the WhatsApp Business app if it was on it. coexistence: the number stays on the Business app too (Meta's `FINISH_WHATSAPP_BUSINESS_APP_ONBOARDING`); it is not registered.",
});

const Id = (description: string) => Type.String({ pattern: '^[0-9]{1,32}$', description });

const OnboardingSchema = Type.Object(
  {
    phoneNumberId: Type.String(),
    wabaId: Type.String(),
    mode: Mode,
    status: Type.Union([Type.Literal('in_progress'), Type.Literal('failed'), Type.Literal('connected')], {
      description:
        'in_progress: steps are left (a runner is on them, or Meta could not be reached and it resumes); failed: Meta refused the step `error` names; connected: the channel is saved.',
    }),
    steps: Type.Array(
      Type.Object({
        step: Type.Enum([...STEP_NAMES]),
        finishedAt: nullable(Timestamp),
      }),
      { description: 'In the order they run (register_number only in mode cloud_api).' },
    ),
    error: nullable(
      Type.Object(
        {
          step: Type.Enum([...STEP_NAMES]),
          providerCode: nullable(Type.Integer({ description: "Meta's error code." })),
          providerSubcode: nullable(Type.Integer({ description: "Meta's error subcode." })),
          message: Type.String({ description: "Meta's message (or why Meta could not be asked)." }),
          at: Timestamp,
        },
        { description: 'The step Meta refused last, and what it said.' },
      ),
    ),
    startedAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'ChannelOnboarding' },
);

const SignupSettingsSchema = Type.Object(
  {
    available: Type.Boolean({
      description:
        "Whether the account's partner has a Meta app with an Embedded Signup configuration: the console shows Connect WhatsApp. Otherwise the number is connected with PUT /account/channel and a token.",
    }),
    appId: nullable(Type.String({ description: "The partner's Meta app id (FB.init's appId)." })),
    configurationId: nullable(
      Type.String({ description: "The Embedded Signup configuration (FB.login's config_id)." }),
    ),
    graphApiVersion: Type.String({
      description: "The Graph API version Tidings calls (FB.init's version), e.g. v21.0.",
    }),
    onboarding: nullable(OnboardingSchema),
  },
  {
    title: 'EmbeddedSignup',
    examples: [
      {
        available: true,
        appId: '1234567890123456',
        configurationId: '987654321098765',
        graphApiVersion: 'v21.0',
        onboarding: null,
      },
    ],
  },
);

const SignupBody = Type.Object(
  {
    code: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: "The code of FB.login's response (`authResponse.code`): good once, for a few minutes.",
    }),
    wabaId: Id(
      "The WhatsApp Business Account id of Meta's `WA_EMBEDDED_SIGNUP` message event (`data.waba_id`).",
    ),
    phoneNumberId: Type.Optional(
      Id(
        "The phone number id of the same event (`data.phone_number_id`). Required, but in mode coexistence: Meta's FINISH_WHATSAPP_BUSINESS_APP_ONBOARDING names only the WABA, and Tidings finds its number.",
      ),
    ),
    mode: Type.Optional(Mode),
  },
  { additionalProperties: false },
);

/** The Graph API version of the configured base URL (…/v21.0). */
const versionOf = (graphUrl: string) => /\/(v\d+\.\d+)\/?$/.exec(graphUrl)?.[1] ?? 'v21.0';

export function embeddedSignupRoutes(ctx: ChannelContext): FastifyPluginAsyncTypebox {
  const tags = ['account'];
  return async (app) => {
    app.get(
      '/account/channel/embedded-signup',
      {
        config: { access: 'account' },
        schema: {
          tags,
          operationId: 'getEmbeddedSignup',
          summary: "What launching Meta's Embedded Signup needs, and the last onboarding's progress",
          response: { 200: SignupSettingsSchema },
        },
      },
      async (request) => {
        const accountId = accountOf(request).id;
        const partnerApp = await partnerAppOfAccount(ctx.db, ctx.secrets, accountId);
        return {
          available: Boolean(partnerApp?.configurationId),
          appId: partnerApp?.appId ?? null,
          configurationId: partnerApp?.configurationId ?? null,
          graphApiVersion: versionOf(ctx.config.whatsappGraphUrl),
          onboarding: await latestOnboarding(ctx.db, accountId),
        };
      },
    );

    app.post(
      '/account/channel/embedded-signup',
      {
        config: { access: 'account', errors: ['FORBIDDEN', 'CONFLICT', 'SERVICE_UNAVAILABLE'] },
        schema: {
          tags,
          operationId: 'completeEmbeddedSignup',
          summary: "Connect the number a client chose in Meta's Embedded Signup",
          description:
            "Completes the signup on the partner's Meta app: the code exchanged for the client's business token, the app subscribed to the WABA's webhooks, the number registered for the Cloud API with a PIN Tidings generates (not in mode coexistence), the number read, the channel saved (`channel.connected`). Each step is written down as it ends: the same request again resumes at the first step not done (a crash resumes by itself within minutes), and a registration is never repeated. Meta's refusals name the step, Meta's code and its message: 400 for the code, the WABA or the number; 409 for a number taken (another account's, another provider's PIN) or an app misconfigured; 503 when Meta cannot be reached (resumable). A sandbox key may not change the channel (403).",
          body: SignupBody,
          response: { 200: ChannelSchema },
        },
      },
      async (request) => {
        if (request.principal?.mode === 'sandbox') {
          throw new ApiError('FORBIDDEN', 'A sandbox key may not change the channel; use a live key.');
        }
        const accountId = accountOf(request).id;
        const channel = await completeSignup(ctx, accountId, request.body);
        ctx.auth.forgetAccount(accountId);
        return toChannel(channel, ctx.config.publicBaseUrl, accountId);
      },
    );
  };
}
