// How the voice channel looks on the wire. The auth token is write-only.
import { Type } from 'typebox';
import type { VoiceChannel } from '../../channels/voice.ts';
import { NullableTimestamp } from '../../kernel/http/schemas.ts';
import { voiceCallbackBase } from './urls.ts';

export const PutVoiceChannelBody = Type.Object(
  {
    provider: Type.Union([Type.Literal('sandbox'), Type.Literal('twilio')], {
      description: '`sandbox` (the default: simulated calls), or a Twilio account.',
    }),
    twilio: Type.Optional(
      Type.Object(
        {
          accountSid: Type.String({
            pattern: '^AC[0-9a-fA-F]{32}$',
            description: 'Your Twilio Account SID (AC…).',
          }),
          authToken: Type.String({
            minLength: 32,
            maxLength: 64,
            description: 'Your Twilio Auth Token: checked with Twilio, stored encrypted, never shown again.',
          }),
          from: Type.String({
            minLength: 1,
            maxLength: 40,
            description:
              'A number of the Twilio account (or a verified caller id) that calls come from, E.164.',
          }),
        },
        { additionalProperties: false, description: 'Required with `twilio`; not with `sandbox`.' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const VoiceChannelSchema = Type.Object(
  {
    provider: Type.Enum(['sandbox', 'twilio']),
    twilio: Type.Union([
      Type.Object(
        { accountSid: Type.String(), from: Type.String() },
        { description: 'The auth token is never shown.' },
      ),
      Type.Null(),
    ]),
    callbackUrl: Type.String({
      description:
        'Where Twilio calls back about this account’s calls. Tidings gives it with each call, so nothing needs setting in Twilio’s console; it must be reachable by Twilio and start with PUBLIC_BASE_URL, which Twilio’s signatures cover.',
    }),
    updatedAt: NullableTimestamp,
  },
  { title: 'VoiceChannel' },
);

export function toVoiceChannel(channel: VoiceChannel, publicBaseUrl: string, accountId: string) {
  return {
    provider: channel.provider,
    twilio: channel.twilio,
    callbackUrl: voiceCallbackBase(publicBaseUrl, accountId),
    updatedAt: channel.updatedAt?.toISOString() ?? null,
  };
}
