-- Embedded Signup (docs/messaging.md § Connecting a number). The partner's app gains the
-- configuration its Embedded Signup runs with (Meta's `config_id`: shown to the console, not a
-- secret), and each number being connected has an onboarding row: the steps done and when, so that
-- a request or the resume job after a crash starts at the first step not done, never repeating one
-- Meta has taken (whatsapp-channel/embedded-signup.ts).
ALTER TABLE partner_whatsapp_apps ADD COLUMN configuration_id text;

CREATE TABLE channel_onboardings (
  account_id text NOT NULL REFERENCES accounts (id),
  phone_number_id text NOT NULL,
  business_account_id text NOT NULL,
  -- cloud_api: the number is registered for the Cloud API; coexistence: it stays on the WhatsApp
  -- Business app as well, and is not registered.
  mode text NOT NULL CHECK (mode IN ('cloud_api', 'coexistence')),
  -- in_progress (steps left), failed (Meta refused a step: `error`), connected (the channel saved).
  status text NOT NULL CHECK (status IN ('in_progress', 'failed', 'connected')),
  -- The sha256 of the signup's code: the same code again resumes, a new one starts over.
  code_hash text NOT NULL,
  -- { code, accessToken?, pin } sealed with SECRETS_KEY: the code until it is exchanged, the
  -- client's business token, the two-step verification PIN the number is registered with.
  secrets_sealed text NOT NULL,
  -- { step: finishedAt ISO } for each step done.
  steps jsonb NOT NULL DEFAULT '{}',
  -- { step, providerCode, providerSubcode, message, at } of the step Meta refused last.
  error jsonb,
  -- Whoever runs the steps holds this lease: a second request, or the resume job, waits it out.
  claimed_until timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, phone_number_id)
);
