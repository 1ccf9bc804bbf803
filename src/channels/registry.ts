// Picks the adapter a message or template goes through: the sandbox for every sandbox key and for
// accounts on the sandbox channel, the WhatsApp Cloud API for live keys of accounts configured for
// it. One HTTP agent is shared by every WhatsApp adapter, so connections to the Graph API are reused.
import type { Agent } from 'undici';
import type { SecretBox } from '../kernel/crypto/secrets.ts';
import { SandboxAdapter } from './sandbox/adapter.ts';
import { SandboxVoiceAdapter, sandboxVoiceToken } from './sandbox/voice.ts';
import type { ChannelConfig, WhatsAppSecrets } from './settings.ts';
import { twilioVoiceCallbacks } from './twilio-voice/callbacks.ts';
import { createTwilioAgent, TwilioVoiceAdapter } from './twilio-voice/client.ts';
import type { CallbackAdapter, ChannelAdapter, Provider } from './types.ts';
import type { VoiceAdapter, VoiceCallbackReader, VoiceChannel, VoiceProvider } from './voice.ts';
import { WhatsAppBusinessProfile } from './whatsapp-cloud/business-profile.ts';
import { whatsappCallbacks } from './whatsapp-cloud/callbacks.ts';
import { createGraphAgent, WhatsAppCloudAdapter } from './whatsapp-cloud/client.ts';
import { WhatsAppMedia } from './whatsapp-cloud/media.ts';
import { WhatsAppOnboarding } from './whatsapp-cloud/onboarding.ts';

/** The providers that call back, and how their callbacks are checked and read. */
const CALLBACKS: Partial<Record<Provider, CallbackAdapter>> = { whatsapp_cloud: whatsappCallbacks };

export type SendMode = 'live' | 'sandbox';

/** The provider that carries a message sent in this mode on this channel. */
export function providerFor(channelProvider: Provider, mode: SendMode): Provider {
  return mode === 'sandbox' ? 'sandbox' : channelProvider;
}

export class ChannelNotConfigured extends Error {
  override name = 'ChannelNotConfigured';
}

export class Channels {
  readonly sandbox = new SandboxAdapter();
  readonly sandboxVoice = new SandboxVoiceAdapter();
  readonly #secrets: SecretBox;
  readonly #graphUrl: string;
  readonly #timeoutMs: number;
  readonly #agent: Agent;
  readonly #opened = new Map<string, WhatsAppSecrets>();
  readonly #twilioUrl: string;
  readonly #twilioAgent: Agent;
  readonly #secretsKey: string | null;

  constructor(deps: {
    secrets: SecretBox;
    whatsappGraphUrl: string;
    timeoutMs: number;
    twilioApiUrl?: string;
    /** The sandbox's voice callbacks are signed with a token derived from it. */
    secretsKey?: string | null;
  }) {
    this.#secrets = deps.secrets;
    this.#graphUrl = deps.whatsappGraphUrl;
    this.#timeoutMs = deps.timeoutMs;
    this.#agent = createGraphAgent(deps.timeoutMs);
    this.#twilioUrl = deps.twilioApiUrl ?? 'https://api.twilio.com';
    this.#twilioAgent = createTwilioAgent(deps.timeoutMs);
    this.#secretsKey = deps.secretsKey ?? null;
  }

  /** A Twilio connection for these credentials (also before they are saved). */
  twilio(accountSid: string, authToken: string) {
    return {
      connection: { apiUrl: this.#twilioUrl, accountSid, authToken, timeoutMs: this.#timeoutMs },
      agent: this.#twilioAgent,
    };
  }

  /** The voice adapter of `provider` on this voice channel; throws ChannelNotConfigured if it cannot be used. */
  voice(provider: VoiceProvider, channel: VoiceChannel): VoiceAdapter {
    if (provider === 'sandbox') return this.sandboxVoice;
    const { connection, agent } = this.twilio(
      channel.twilio?.accountSid ?? '',
      this.voiceToken('twilio', channel, ''),
    );
    return new TwilioVoiceAdapter(connection, agent);
  }

  /** How voice callbacks are checked and read: both voice providers post Twilio's shape. */
  readonly voiceCallbacks: VoiceCallbackReader = twilioVoiceCallbacks;

  /** The token a voice provider signs an account's callbacks with (Twilio: the auth token). */
  voiceToken(provider: VoiceProvider, channel: VoiceChannel, accountId: string): string {
    if (provider === 'sandbox') return sandboxVoiceToken(this.#secretsKey, accountId);
    if (channel.provider !== 'twilio' || !channel.twilio || !channel.authTokenSealed) {
      throw new ChannelNotConfigured('the account is no longer configured for Twilio voice');
    }
    return this.#secrets.open(channel.authTokenSealed);
  }

  sealText(plain: string): string {
    return this.#secrets.seal(plain);
  }

  /** The channel's credentials (whatsapp_cloud only). */
  secretsOf(channel: ChannelConfig): WhatsAppSecrets {
    const sealed = channel.secretsSealed;
    if (!sealed) throw new ChannelNotConfigured('the channel has no credentials');
    let secrets = this.#opened.get(sealed);
    if (!secrets) {
      if (this.#opened.size > 10_000) this.#opened.clear();
      secrets = JSON.parse(this.#secrets.open(sealed)) as WhatsAppSecrets;
      this.#opened.set(sealed, secrets);
    }
    return secrets;
  }

  sealSecrets(secrets: WhatsAppSecrets): string {
    return this.#secrets.seal(JSON.stringify(secrets));
  }

  /** A WhatsApp Cloud API adapter for these ids and credentials (also before they are saved). */
  whatsapp(
    ids: { phoneNumberId: string; businessAccountId: string },
    accessToken: string,
  ): WhatsAppCloudAdapter {
    return new WhatsAppCloudAdapter(
      {
        graphUrl: this.#graphUrl,
        phoneNumberId: ids.phoneNumberId,
        businessAccountId: ids.businessAccountId,
        accessToken,
        timeoutMs: this.#timeoutMs,
      },
      this.#agent,
    );
  }

  /** The adapter for `provider` on this channel; throws ChannelNotConfigured if it cannot be used. */
  adapter(channel: ChannelConfig, provider: Provider): ChannelAdapter {
    if (provider === 'sandbox') return this.sandbox;
    if (channel.provider !== 'whatsapp_cloud' || !channel.whatsapp) {
      throw new ChannelNotConfigured('the account is no longer configured for the WhatsApp Cloud API');
    }
    return this.whatsapp(channel.whatsapp, this.secretsOf(channel).accessToken);
  }

  /** The WhatsApp business profile of this channel's number; throws ChannelNotConfigured if it cannot be used. */
  whatsappProfile(channel: ChannelConfig): WhatsAppBusinessProfile {
    if (channel.provider !== 'whatsapp_cloud' || !channel.whatsapp) {
      throw new ChannelNotConfigured('the account is no longer configured for the WhatsApp Cloud API');
    }
    return new WhatsAppBusinessProfile(
      {
        graphUrl: this.#graphUrl,
        phoneNumberId: channel.whatsapp.phoneNumberId,
        businessAccountId: channel.whatsapp.businessAccountId,
        accessToken: this.secretsOf(channel).accessToken,
        timeoutMs: this.#timeoutMs,
      },
      this.#agent,
    );
  }

  /** The Graph calls that connect a number through a partner's Meta app (Embedded Signup). */
  whatsappOnboarding(): WhatsAppOnboarding {
    return new WhatsAppOnboarding(this.#graphUrl, this.#timeoutMs, this.#agent);
  }

  /** The WhatsApp Cloud API's media endpoints for this channel; throws ChannelNotConfigured if it cannot be used. */
  whatsappMedia(channel: ChannelConfig): WhatsAppMedia {
    if (channel.provider !== 'whatsapp_cloud' || !channel.whatsapp) {
      throw new ChannelNotConfigured('the account is no longer configured for the WhatsApp Cloud API');
    }
    return new WhatsAppMedia(
      {
        graphUrl: this.#graphUrl,
        phoneNumberId: channel.whatsapp.phoneNumberId,
        businessAccountId: channel.whatsapp.businessAccountId,
        accessToken: this.secretsOf(channel).accessToken,
        timeoutMs: this.#timeoutMs,
      },
      this.#agent,
    );
  }

  /** The callback half of a provider (null for one that never calls back: the sandbox). */
  callbacks(provider: Provider): CallbackAdapter | null {
    return CALLBACKS[provider] ?? null;
  }

  async close(): Promise<void> {
    await this.#twilioAgent.close();
    await this.#agent.close();
  }
}
