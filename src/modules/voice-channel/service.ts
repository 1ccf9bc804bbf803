// Setting an account's voice channel: the sandbox, or a Twilio account whose credentials are
// checked with Twilio before anything is saved (the token opens the account, `from` is one of its
// numbers), then kept sealed. Calls already made keep the provider they were made with.
import type { Channels } from '../../channels/registry.ts';
import { checkTwilioCredentials } from '../../channels/twilio-voice/client.ts';
import { SANDBOX_VOICE, type VoiceChannel } from '../../channels/voice.ts';
import type { Database } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { normalizePhone } from '../../kernel/values/phones.ts';
import { invalidFields } from '../contacts/index.ts';
import { loadVoiceChannel, saveVoiceChannel } from './repo.ts';

export interface VoiceChannelInput {
  provider: 'sandbox' | 'twilio';
  twilio?: { accountSid: string; authToken: string; from: string };
}

export async function configureVoiceChannel(
  s: { db: Database; channels: Channels; now: () => Date },
  accountId: string,
  input: VoiceChannelInput,
): Promise<VoiceChannel> {
  let channel: VoiceChannel = SANDBOX_VOICE;
  if (input.provider === 'sandbox' && input.twilio) {
    throw invalidFields([{ field: 'twilio', issue: 'is for the twilio provider only' }]);
  }
  if (input.provider === 'twilio') {
    const twilio = input.twilio;
    if (!twilio) throw invalidFields([{ field: 'twilio', issue: 'is required for the twilio provider' }]);
    const from = normalizePhone(twilio.from);
    if (!from) {
      throw invalidFields([
        { field: 'twilio.from', issue: 'is not a phone number in E.164 (such as +14155550123)' },
      ]);
    }
    const { connection, agent } = s.channels.twilio(twilio.accountSid, twilio.authToken);
    const check = await checkTwilioCredentials(connection, agent, from);
    if (check.kind === 'refused')
      throw invalidFields([{ field: `twilio.${check.field}`, issue: check.issue }]);
    if (check.kind === 'unavailable') {
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        `Twilio could not be asked to check the credentials: ${check.reason}`,
      );
    }
    channel = {
      provider: 'twilio',
      twilio: { accountSid: twilio.accountSid, from },
      authTokenSealed: s.channels.sealText(twilio.authToken),
      updatedAt: s.now(),
    };
  }
  await saveVoiceChannel(s.db, accountId, channel, s.now());
  return loadVoiceChannel(s.db, accountId);
}
