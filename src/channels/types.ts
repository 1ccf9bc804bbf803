// The contract between Tidings and a messaging provider, in two halves:
// - ChannelAdapter, made for one channel with its credentials: sends a message, submits and deletes
//   a template;
// - CallbackAdapter, one per provider that calls back: answers its subscription handshake, checks
//   a callback's signature against a secret, and turns its payload into ProviderUpdates grouped by
//   the number they are for. It holds no credentials: which secret to check against (an account's
//   channel, or a partner's app) is the caller's to know (modules/callbacks/service.ts).
// The rest of Tidings never sees a provider's own shapes.

export type Provider = 'sandbox' | 'whatsapp_cloud';

export const PROVIDERS: readonly Provider[] = ['sandbox', 'whatsapp_cloud'];

export type TemplateCategory = 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';

/** A template component exactly as the WhatsApp Cloud API defines it (the API's own JSON). */
export type TemplateComponent =
  | {
      type: 'HEADER';
      format: 'TEXT' | 'IMAGE' | 'VIDEO' | 'DOCUMENT';
      /** TEXT headers: up to 60 characters, at most one placeholder {{1}}. */
      text?: string;
      /**
       * Example values: `header_text` for a TEXT header (`header_text_named_params` in a NAMED
       * template), `header_handle` (media URLs) otherwise.
       */
      example?: {
        header_text?: string[];
        header_handle?: string[];
        header_text_named_params?: NamedExample[];
      };
    }
  | {
      type: 'BODY';
      text: string;
      /** One list of example values, one per placeholder (a NAMED template: one per name). */
      example?: { body_text?: string[][]; body_text_named_params?: NamedExample[] };
    }
  | { type: 'FOOTER'; text: string }
  | { type: 'BUTTONS'; buttons: TemplateButton[] };

export type TemplateButton =
  | { type: 'QUICK_REPLY'; text: string }
  | { type: 'URL'; text: string; url: string; example?: string[] }
  | { type: 'PHONE_NUMBER'; text: string; phone_number: string };

/** A NAMED template's example value of one placeholder, as Meta takes it. */
export interface NamedExample {
  param_name: string;
  example: string;
}

/** How a template writes its placeholders: {{1}}, {{2}}, … or {{first_name}}. */
export type ParameterFormat = 'POSITIONAL' | 'NAMED';

export interface TemplateDefinition {
  name: string;
  language: string;
  category: TemplateCategory;
  components: TemplateComponent[];
  /** POSITIONAL when left out. */
  parameterFormat?: ParameterFormat;
}

/**
 * A send's template parameters: positional values in order (header, body, URL buttons), or a NAMED
 * template's values by placeholder name.
 */
export type TemplateParameters = string[] | Record<string, string>;

/** The payload a send gives one of the template's QUICK_REPLY buttons (its index among the buttons). */
export interface QuickReplyPayload {
  index: number;
  payload: string;
}

/** What media an outbound message sends; a sticker is a webp image, without caption or filename. */
export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

export interface InteractiveButtons {
  kind: 'buttons';
  header?: string;
  body: string;
  footer?: string;
  buttons: { id: string; title: string }[];
}

export interface InteractiveList {
  kind: 'list';
  header?: string;
  body: string;
  footer?: string;
  /** The label of the button that opens the list. */
  buttonText: string;
  sections: { title?: string; rows: { id: string; title: string; description?: string }[] }[];
}

/** One button that opens a link (WhatsApp's interactive cta_url). */
export interface InteractiveCtaUrl {
  kind: 'cta_url';
  header?: string;
  body: string;
  footer?: string;
  button: { text: string; url: string };
}

/** A body with WhatsApp's "Send location" button (its location_request_message). */
export interface InteractiveLocationRequest {
  kind: 'location_request';
  body: string;
}

/**
 * A body with WhatsApp's "Share contact info" button (Meta's request_contact_info): asks a customer
 * who wrote without their number for it.
 */
export interface InteractiveContactRequest {
  kind: 'contact_request';
  body: string;
}

export type OutboundInteractive =
  | InteractiveButtons
  | InteractiveList
  | InteractiveCtaUrl
  | InteractiveLocationRequest
  | InteractiveContactRequest;

/** A contact card exactly as the WhatsApp Cloud API takes it (snake_case, Meta's own JSON). */
export interface ContactCard {
  name: {
    formatted_name: string;
    first_name?: string;
    last_name?: string;
    middle_name?: string;
    suffix?: string;
    prefix?: string;
  };
  addresses?: {
    street?: string;
    city?: string;
    state?: string;
    zip?: string;
    country?: string;
    country_code?: string;
    type?: string;
  }[];
  /** YYYY-MM-DD. */
  birthday?: string;
  emails?: { email?: string; type?: string }[];
  org?: { company?: string; department?: string; title?: string };
  phones?: { phone?: string; wa_id?: string; type?: string }[];
  urls?: { url?: string; type?: string }[];
}

/** What an outbound message says, already validated. */
export type MessageContent =
  | {
      type: 'template';
      /**
       * The template as approved, its parameters (positional in order: header, body, URL buttons;
       * or by name), and the quick-reply payloads the send sets.
       */
      template: TemplateDefinition & { parameters: TemplateParameters; buttonPayloads?: QuickReplyPayload[] };
    }
  | { type: 'text'; text: { body: string; previewUrl: boolean } }
  | {
      type: 'media';
      media: {
        kind: MediaKind;
        /** A public link to the file, or (exactly one of the two) an upload of the account: */
        url?: string;
        /** Tidings' id of the upload (med_…), and at hand-over the provider's id for it. */
        mediaId?: string;
        providerMediaId?: string;
        caption?: string;
        filename?: string;
      };
    }
  | { type: 'interactive'; interactive: OutboundInteractive }
  | {
      type: 'location';
      location: { latitude: number; longitude: number; name?: string; address?: string };
    }
  | { type: 'contacts'; contacts: ContactCard[] }
  /** An emoji on an earlier message, named by the provider's id for it; empty removes the reaction. */
  | { type: 'reaction'; reaction: { providerMessageId: string; emoji: string } };

export interface OutboundMessage {
  /** Tidings' id (msg_…). */
  id: string;
  /** The chat's address: E.164 with the leading +, or a WhatsApp user id (isPhoneAddress). */
  to: string;
  content: MessageContent;
  /** The provider's id of the message this one quotes (a reply), if any. */
  replyTo?: string | null;
}

export type MarkReadOutcome =
  /** The provider marked it read (and showed the typing indicator, if asked). */
  | { kind: 'marked' }
  /** The provider refused (an unknown or too old message, credentials): nothing changed there. */
  | { kind: 'rejected'; error: ProviderError }
  /** The provider could not be reached: the caller may retry. */
  | { kind: 'retry'; error: ProviderError };

/** Why a message (or a template submission) failed, as stored and shown. */
export interface ProviderError {
  /** Tidings' code for the failure, e.g. RECIPIENT_UNREACHABLE (docs/messaging.md lists them). */
  code: string;
  message: string;
  /** The provider's own error code, when it gave one (Meta's `error.code`). */
  providerCode: number | null;
}

export type SendOutcome =
  /**
   * The provider took the message; its id is how later status updates name it. `recipientWaId` is
   * the provider's id for the recipient's number when it reports one (WhatsApp's wa_id).
   */
  | { kind: 'accepted'; providerMessageId: string; recipientWaId?: string; providerStatus?: string }
  /**
   * Nobody knows whether the provider took it: the request went out and no usable answer came back
   * (a timeout, a connection lost mid-exchange, a 200 without the message's id). It is not sent
   * again blindly: the provider's status callback settles it, or the in-doubt wait runs out.
   */
  | { kind: 'in_doubt'; error: ProviderError }
  /** The provider refused it for good (bad number, template unknown to it, …): fail it now. */
  | { kind: 'rejected'; error: ProviderError }
  /** A passing failure (unreachable, 5xx, throttled): try again later. */
  | { kind: 'retry'; error: ProviderError; retryAfterSeconds?: number };

export type SubmitOutcome =
  /** The provider took the template for review (PENDING), or decided at once. */
  | {
      kind: 'submitted';
      providerTemplateId: string;
      status: 'PENDING' | 'APPROVED' | 'REJECTED';
      reason?: string | null;
    }
  /** The provider refused the submission itself (invalid for it): the template is REJECTED. */
  | { kind: 'rejected'; error: ProviderError }
  /** The provider could not be reached: the template stays as it was; the caller may retry. */
  | { kind: 'retry'; error: ProviderError };

export type DeleteOutcome =
  /** The provider no longer has the template (deleted now, or before by other means). */
  | { kind: 'deleted' }
  /** The provider refused (credentials, permissions): it still has the template. */
  | { kind: 'rejected'; error: ProviderError }
  /** The provider could not be reached: nothing changed; the caller may retry. */
  | { kind: 'retry'; error: ProviderError };

export type MessageStatusUpdate = 'sent' | 'delivered' | 'read' | 'failed';

/** What a provider says it bills for a message (WhatsApp's `pricing` on status callbacks). */
export interface ProviderPricing {
  /** Whether the provider bills it; null when it did not say. */
  billable: boolean | null;
  /** The provider's pricing model: Meta's PMP (per message, since July 2025) or CBP (per conversation). */
  model: string | null;
  /** The category billed (marketing, utility, authentication, service, …). */
  category: string | null;
  /** Meta's kind of charge under per-message pricing: regular, free_customer_service, free_entry_point. */
  type: string | null;
}

/** The provider's conversation a message was counted in (WhatsApp's `conversation`, per-conversation pricing). */
export interface ProviderConversation {
  id: string;
  /** What opened it (marketing, utility, authentication, service, referral_conversion, …). */
  origin: string | null;
  expiresAt: Date | null;
}

export type TemplateQualityScore = 'GREEN' | 'YELLOW' | 'RED' | 'UNKNOWN';

export type TemplateStatusEvent = 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED' | 'REINSTATED';

/** One fact a provider reports about something Tidings sent or submitted. */
export type ProviderUpdate =
  | {
      kind: 'message_status';
      providerMessageId: string;
      /**
       * Our id of the message, when the provider echoes it (WhatsApp's biz_opaque_callback_data):
       * how a message whose hand-over was cut off before its provider id was recorded is found.
       */
      messageId?: string;
      status: MessageStatusUpdate;
      at: Date;
      /** For `failed`. */
      error?: ProviderError;
      /** The provider's id for the recipient's number (WhatsApp's recipient_id, its wa_id). */
      recipientWaId?: string;
      /** The recipient's business-scoped user id (recipient_user_id), parent id and username. */
      recipientUserId?: string;
      recipientParentUserId?: string;
      recipientUsername?: string;
      /** What the provider says it bills for the message, when it says. */
      pricing?: ProviderPricing;
      conversation?: ProviderConversation;
    }
  | {
      kind: 'template_status';
      providerTemplateId: string;
      name: string;
      language: string;
      event: TemplateStatusEvent;
      /** Meta's reason (REJECTED: INVALID_FORMAT, ABUSIVE_CONTENT, …), null for none. */
      reason: string | null;
    }
  /** A message a customer sent. */
  | { kind: 'inbound_message'; message: InboundMessage }
  /**
   * A message the business sent from the WhatsApp Business app of a coexistence number (Meta's
   * `smb_message_echoes`): stored as an outbound message, never sent or charged.
   */
  | { kind: 'business_echo'; echo: BusinessEcho }
  /** A contact of the Business app added, edited or removed (Meta's `smb_app_state_sync`). */
  | { kind: 'app_contact'; contact: AppContact }
  /** A chunk of the Business app's chat history (Meta's `history`), shared once after onboarding. */
  | { kind: 'history_chunk'; chunk: HistoryChunk }
  /** The business declined to share its history (Meta's `history` error 2593109). */
  | { kind: 'history_declined'; providerCode: number | null; message: string }
  /** A voice message (or audio) the customer played (WhatsApp's `played` status); its status stays. */
  | { kind: 'message_played'; providerMessageId: string; messageId?: string; at: Date }
  /**
   * A customer stopped (or resumed) marketing messages (WhatsApp's `user_preferences`), named by the
   * number's wa_id, the user id, or both.
   */
  | {
      kind: 'marketing_preference';
      waId: string | null;
      userId: string | null;
      parentUserId: string | null;
      stopped: boolean;
      at: Date;
      detail: string | null;
    }
  /**
   * A customer's WhatsApp identity changed (a `system` message: user_changed_number, with the new
   * number, or user_changed_user_id; the withdrawn `user_id_update` field): the contact known by
   * the previous number or user id takes the new ones.
   */
  | {
      kind: 'identity_change';
      change: 'number' | 'user_id';
      previous: { phone: string | null; userId: string | null };
      /** The new number (E.164, with its wa_id) and user id, where given. */
      current: {
        phone: string | null;
        waId: string | null;
        userId: string | null;
        parentUserId: string | null;
      };
      at: Date;
    }
  /** The number's quality or messaging limit moved (WhatsApp's `phone_number_quality_update`, WABA-wide). */
  | { kind: 'number_quality'; signal: NumberQualitySignal }
  /** Meta changed something about the business account (WhatsApp's `account_update`, WABA-wide). */
  | { kind: 'account_update'; signal: AccountUpdateSignal }
  /** An error Meta reports about the number or the app, not about one message (WhatsApp's `errors`). */
  | { kind: 'channel_error'; error: ChannelErrorSignal }
  /** Meta's new quality score of a template (message_template_quality_update). */
  | {
      kind: 'template_quality';
      providerTemplateId: string;
      name: string;
      language: string;
      previousScore: TemplateQualityScore | null;
      score: TemplateQualityScore;
    }
  /**
   * A template's category changed (template_category_update), or is to change at `scheduledAt`
   * (Meta's notice a day ahead: `correctCategory` set, the category still `category`).
   */
  | {
      kind: 'template_category';
      providerTemplateId: string;
      name: string;
      language: string;
      previousCategory: string | null;
      category: string;
      correctCategory: string | null;
      scheduledAt: Date | null;
    }
  /** Anything else the provider sent, kept for the log rather than dropped silently. */
  | { kind: 'unknown'; field: string; raw: unknown };

/** A message the business sent from the WhatsApp Business app, as Meta echoes it. */
export interface BusinessEcho {
  providerMessageId: string;
  /** The customer's number (E.164) and user id, as given. */
  to: string | null;
  toUserId: string | null;
  sentAt: Date;
  type: InboundType;
  content: InboundContent;
}

/** One chunk of a coexistence number's history: Meta's phase (0: day 0–1, 1: 1–90, 2: 90–180). */
export interface HistoryChunk {
  phase: number;
  chunkOrder: number;
  /** 0–100; 100: the whole history is shared. */
  progress: number;
  threads: HistoryThread[];
}

/** One customer's chat of the history. */
export interface HistoryThread {
  /** The customer's number (E.164) and user id, as given. */
  phone: string | null;
  userId: string | null;
  username: string | null;
  messages: HistoryMessage[];
}

export interface HistoryMessage {
  providerMessageId: string;
  /** Sent by the business (from the app), else by the customer. */
  fromBusiness: boolean;
  sentAt: Date;
  type: InboundType;
  content: InboundContent;
  /** Meta's history_context.status: DELIVERED, ERROR, PENDING, PLAYED, READ, SENT. */
  status: string | null;
}

/** A contact of the WhatsApp Business app's address book. */
export interface AppContact {
  /** add: added or edited; remove: removed from the app (Tidings keeps its contact). */
  action: 'add' | 'remove';
  phone: string | null;
  userId: string | null;
  username: string | null;
  fullName: string | null;
  at: Date;
}

/** What `phone_number_quality_update` says, as Meta names it. */
export interface NumberQualitySignal {
  /** The number it is about, as Meta displays it (digits): the payload names no phone number id. */
  displayPhoneNumber: string | null;
  /** FLAGGED, UNFLAGGED, UPGRADE, DOWNGRADE, THROUGHPUT_UPGRADE, ONBOARDING, … */
  event: string;
  /** The messaging limit tier now (TIER_250 … TIER_UNLIMITED), when given. */
  currentLimit: string | null;
  /** The tier before, on a limit change. */
  previousLimit: string | null;
  /** Meta's newer daily limit field (`max_daily_conversations_per_business`), as given. */
  maxDailyConversations: string | null;
  at: Date;
}

/** What `account_update` says: the event and the details Meta attaches to it. */
export interface AccountUpdateSignal {
  /** VERIFIED_ACCOUNT, DISABLED_UPDATE, ACCOUNT_VIOLATION, ACCOUNT_RESTRICTION, ACCOUNT_DELETED, … */
  event: string;
  /** The number it is about, when Meta names one (digits). */
  phoneNumber: string | null;
  /** `ban_info`, `restriction_info`, `violation_info`, … as Meta sent them. */
  details: Record<string, unknown>;
  at: Date;
}

/** One error of the `errors` webhook field. */
export interface ChannelErrorSignal {
  providerCode: number | null;
  title: string;
  message: string;
  details: string | null;
  at: Date;
}

export type InboundMediaKind = MediaKind | 'sticker';

/**
 * What a customer's message says, as stored and shown (the message's `content`): one key named
 * after its type. Nothing the provider said is dropped: a type Tidings does not model is kept
 * whole under `unsupported`.
 */
export type InboundContent =
  | { text: { body: string } }
  | {
      media: {
        kind: InboundMediaKind;
        /** The provider's media id (fetch it from the provider with the channel's credentials). */
        id: string;
        mimeType: string | null;
        sha256: string | null;
        caption: string | null;
        filename: string | null;
        /** Audio recorded as a voice note. */
        voice: boolean;
        /** An animated sticker. */
        animated: boolean;
      };
    }
  /** A tap on a reply button or a list row of an interactive message Tidings sent. */
  | {
      interactive: {
        kind: 'button_reply' | 'list_reply';
        id: string;
        title: string;
        description: string | null;
      };
    }
  /** A tap on a template's quick-reply button. */
  | { button: { text: string; payload: string | null } }
  /** An emoji on an earlier message (`emoji` empty: the reaction was removed). */
  | { reaction: { providerMessageId: string; messageId: string | null; emoji: string } }
  | {
      location: {
        latitude: number;
        longitude: number;
        name: string | null;
        address: string | null;
        url: string | null;
      };
    }
  /** Contact cards, in the provider's own shape (names, phones, emails, addresses, org, urls). */
  | { contacts: Record<string, unknown>[] }
  /** A type Tidings does not model (order, system, a future one): the provider's message whole. */
  | { unsupported: { providerType: string; raw: unknown } };

export type InboundType =
  | 'text'
  | 'media'
  | 'interactive'
  | 'button'
  | 'reaction'
  | 'location'
  | 'contacts'
  | 'unsupported';

/** A message a customer sent to the business, as a channel reports it. */
export interface InboundMessage {
  /** The provider's id for it (Meta's wamid): a message reported twice is stored once. */
  providerMessageId: string;
  /**
   * The customer's number, E.164 with the leading +; null when the provider withheld it (a
   * WhatsApp customer with a username: `userId` names them then).
   */
  from: string | null;
  /**
   * The provider's id for the customer's number (WhatsApp's wa_id, digits), when it has one: the
   * contact is found by it first, since it can differ from the number the business wrote to.
   */
  waId?: string | null;
  /** The customer's business-scoped user id (Meta's `from_user_id`), its parent id, their username. */
  userId?: string | null;
  parentUserId?: string | null;
  username?: string | null;
  /**
   * The number the customer shared when the business asked for it (a `contacts` message answering
   * Meta's request-contact-info button: origin `contact_request`). A contact card the customer
   * forwards is somebody else's and never sets it.
   */
  sharedPhone?: string | null;
  /** The name on the customer's profile, when the provider gives one. */
  profileName: string | null;
  /** When the customer sent it (the provider's timestamp). */
  sentAt: Date;
  type: InboundType;
  content: InboundContent;
  /** The provider's id of the message this one answers (Meta's `context.id`), if any. */
  replyTo: string | null;
  /** Forwarded by the customer (Meta's `context.forwarded`), and forwarded many times over. */
  forwarded?: boolean;
  frequentlyForwarded?: boolean;
  /** The catalog product the customer asks about (Meta's `context.referred_product`). */
  referredProduct?: ReferredProduct | null;
  /** The ad or post that brought the customer (a click-to-WhatsApp ad's `referral`). */
  referral?: InboundReferral | null;
}

export interface ReferredProduct {
  catalogId: string;
  productRetailerId: string;
}

/** Where a customer who tapped a click-to-WhatsApp ad (or post) came from, as the provider reports it. */
export interface InboundReferral {
  sourceUrl: string | null;
  sourceId: string | null;
  /** ad or post. */
  sourceType: string | null;
  headline: string | null;
  body: string | null;
  /** image or video. */
  mediaType: string | null;
  imageUrl: string | null;
  videoUrl: string | null;
  thumbnailUrl: string | null;
  /** The click id Meta's Conversions API takes back (none for an ad in WhatsApp Status). */
  ctwaClid: string | null;
  /** The greeting the ad showed the customer before they wrote. */
  welcomeMessage: string | null;
}

export interface ChannelAdapter {
  readonly provider: Provider;
  send(message: OutboundMessage): Promise<SendOutcome>;
  /**
   * Submits a template for review. `previous` names the provider's template when this one was
   * submitted before (rejected, then edited): the provider's edit of it is asked for, since a
   * provider refuses a second template of the same name and language.
   */
  submitTemplate(
    template: TemplateDefinition,
    previous?: { providerTemplateId: string },
  ): Promise<SubmitOutcome>;
  /** Deletes a template submitted to this provider (one language of it: the provider's id). */
  deleteTemplate(template: { providerTemplateId: string; name: string }): Promise<DeleteOutcome>;
  /**
   * Marks a customer's message read (WhatsApp shows them blue ticks, and marks the earlier ones of
   * the chat read too) and, with `typing`, shows them the typing indicator (until the business's
   * next message, or 25 seconds).
   */
  markRead(message: { providerMessageId: string; typing: boolean }): Promise<MarkReadOutcome>;
}

/** A provider's callback as it arrived over HTTP: what checking and reading it need. */
export interface CallbackRequest {
  /** The body's bytes as sent: signatures cover them exactly. */
  rawBody: Buffer;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
}

/** The number and business account a group of a callback's updates is for, as the provider names them. */
export interface CallbackDestination {
  /** The business's number (WhatsApp's `metadata.phone_number_id`); null when the updates name none. */
  phoneNumberId: string | null;
  /** The business account (WhatsApp's WABA id, `entry[].id`); null when the payload names none. */
  businessAccountId: string | null;
}

export interface CallbackBatch {
  destination: CallbackDestination;
  updates: ProviderUpdate[];
}

/** The body of a callback is not what the provider sends at all (not JSON, say). */
export class UnreadableCallback extends Error {
  override name = 'UnreadableCallback';
}

export interface CallbackAdapter {
  readonly provider: Provider;
  /** The header that carries the signature (lower case), for logs that say whether it was missing. */
  readonly signatureHeader: string;
  /** The subscription handshake: the text to echo when the request carries `verifyToken`, else null. */
  handshake(request: CallbackRequest, verifyToken: string): string | null;
  /** Whether the provider signed the request with `secret`. */
  verify(request: CallbackRequest, secret: string): boolean;
  /** The updates the request reports, grouped by destination; throws UnreadableCallback. */
  parse(request: CallbackRequest): CallbackBatch[];
}
