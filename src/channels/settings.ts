// An account's messaging channel as stored: which provider carries its live messages, the sandbox's
// simulation settings (which also apply to every message a sandbox key sends), and for the WhatsApp
// Cloud API the ids of the number and business account, with the credentials sealed.
import type { Provider } from './types.ts';

export interface SandboxSettings {
  /** From the message's hand-over (`sent`) to `delivered`. */
  deliveredAfterMs: number;
  /** From `delivered` to `read`; null: never read. */
  readAfterMs: number | null;
  /** From a template's submission to its review decision. */
  reviewAfterMs: number;
}

export const DEFAULT_SANDBOX: SandboxSettings = Object.freeze({
  deliveredAfterMs: 1000,
  readAfterMs: 2000,
  reviewAfterMs: 2000,
});

export interface WhatsAppSettings {
  phoneNumberId: string;
  businessAccountId: string;
  /** The Meta app the number's token is of, when given (a profile photo is uploaded on it). */
  appId?: string | null;
  /** As Meta reports it when the channel is saved. */
  displayPhoneNumber: string | null;
  verifiedName: string | null;
  /**
   * Messages a second the number takes (Meta's throughput level when saved: STANDARD 80, HIGH
   * 1,000); absent on channels saved before it was read: 80. Campaigns pace by it.
   */
  throughputPerSecond?: number;
  /**
   * Meta's messaging limit tier (TIER_250 … TIER_UNLIMITED) when saved, then as
   * phone_number_quality_update reports it; null: not reported.
   */
  messagingLimitTier?: string | null;
  /** Meta's quality rating of the number (GREEN, YELLOW, RED, UNKNOWN) as last read from Meta. */
  qualityRating?: string | null;
  /** The last phone_number_quality_update (signals.ts). */
  lastQualityEvent?: QualityEvent | null;
  /** The last account_update. */
  lastAccountUpdate?: AccountUpdate | null;
  /** The last error of the `errors` webhook field. */
  lastError?: ChannelError | null;
  /**
   * Meta refused the channel's token (190: expired, revoked, the app removed): nothing goes out
   * until the number is connected again (a new Embedded Signup, or PUT with a new token).
   */
  needsReconnect?: { since: string; providerCode: number | null; message: string } | null;
  /**
   * A coexistence number's syncs of its Business app (each asked of Meta once): its contacts and
   * its chat history, with the history's import progress (coexistence-sync.ts, history-import.ts).
   */
  syncs?: { contacts?: SyncState | null; history?: SyncState | null } | null;
  /** How the number was connected: Embedded Signup (and its mode) or a token given (absent). */
  onboarding?: { via: 'embedded_signup'; mode: 'cloud_api' | 'coexistence'; at: string } | null;
}

/** One sync of a coexistence number's Business app, as far as it went. */
export interface SyncState {
  /**
   * requested: Meta took the request; unknown: its answer was lost (not asked again: Meta takes a
   * sync once); refused: Meta said no; importing, complete, declined: the history as it arrives.
   */
  status: 'requested' | 'unknown' | 'refused' | 'importing' | 'complete' | 'declined';
  requestId: string | null;
  requestedAt: string;
  /** Meta's code and message when refused or declined. */
  providerCode?: number | null;
  message?: string | null;
  /** The history's progress as Meta reports it (0–100), its phase (0–2), and messages imported. */
  progress?: number | null;
  phase?: number | null;
  messages?: number;
  updatedAt?: string;
}

export interface QualityEvent {
  event: string;
  currentLimit: string | null;
  previousLimit: string | null;
  maxDailyConversations: string | null;
  at: string;
}

export interface AccountUpdate {
  event: string;
  details: Record<string, unknown>;
  at: string;
}

export interface ChannelError {
  providerCode: number | null;
  title: string;
  message: string;
  details: string | null;
  at: string;
}

/** Messages a second of a throughput level (Meta: standard 80, high up to 1,000). */
export function throughputOf(level: string | null): number {
  return level === 'HIGH' ? 1000 : 80;
}

/** Write-only: kept sealed with SECRETS_KEY, never shown or logged. */
export interface WhatsAppSecrets {
  accessToken: string;
  /**
   * The Meta app's secret: callbacks are signed with it (X-Hub-Signature-256). Absent when the
   * account's partner has set its app (whatsapp-channel/partner-app.ts): the partner's is used.
   */
  appSecret?: string;
  /** What Meta sends back in the `hub.verify_token` of the callback handshake (absent: the partner's). */
  verifyToken?: string;
  /** The two-step verification PIN the number was registered with (Embedded Signup generates it). */
  pin?: string;
}

export interface ChannelConfig {
  provider: Provider;
  sandbox: SandboxSettings;
  whatsapp: WhatsAppSettings | null;
  /** WhatsAppSecrets as sealed JSON (whatsapp_cloud only). */
  secretsSealed: string | null;
  /** null: never configured (the defaults). */
  updatedAt: Date | null;
}

export const DEFAULT_CHANNEL: ChannelConfig = Object.freeze({
  provider: 'sandbox',
  sandbox: DEFAULT_SANDBOX,
  whatsapp: null,
  secretsSealed: null,
  updatedAt: null,
});
