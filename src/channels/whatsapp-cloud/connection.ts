// What Tidings needs to talk to one business's WhatsApp Cloud API number. The access token is a
// secret: it travels only in the Authorization header and never into an error, a log or an outcome.

export interface WhatsAppConnection {
  /** The Graph API base with its version, no trailing slash, e.g. https://graph.facebook.com/v21.0. */
  graphUrl: string;
  /** The business phone number's id (the sender): messages are POSTed to /{phoneNumberId}/messages. */
  phoneNumberId: string;
  /** The WhatsApp Business Account (WABA) id: templates are submitted to /{businessAccountId}/message_templates. */
  businessAccountId: string;
  /** A system-user access token with whatsapp_business_messaging and whatsapp_business_management. */
  accessToken: string;
  /** Each request, headers and body together, gives up after this long. */
  timeoutMs: number;
}
