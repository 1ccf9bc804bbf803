-- One Meta app for many clients. A partner (a Tech Provider or BSP) has one Meta app, and Meta sends
-- every client's webhooks to that app's single callback URL, signed with the app's secret. The
-- partner sets its app once; /api/v1/callbacks/whatsapp verifies with its secret and routes each
-- entry to the partner's account whose channel has that phone number id (and WABA id).
CREATE TABLE partner_whatsapp_apps (
  partner_id text PRIMARY KEY REFERENCES partners (id),
  app_id text NOT NULL,
  -- { appSecret, verifyToken } as one JSON object sealed with SECRETS_KEY: write-only.
  secrets_sealed text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- The WhatsApp number and WABA of a channel as columns of their own, so that a callback can be
-- routed to its account by them (they were only inside `settings`).
ALTER TABLE account_channels ADD COLUMN phone_number_id text;
ALTER TABLE account_channels ADD COLUMN business_account_id text;
UPDATE account_channels
   SET phone_number_id = settings -> 'whatsapp' ->> 'phoneNumberId',
       business_account_id = settings -> 'whatsapp' ->> 'businessAccountId'
 WHERE provider = 'whatsapp_cloud';
CREATE INDEX account_channels_phone_number ON account_channels (phone_number_id)
  WHERE phone_number_id IS NOT NULL;
CREATE INDEX account_channels_business_account ON account_channels (business_account_id)
  WHERE business_account_id IS NOT NULL;
