-- An account's business hours (docs/conversations.md § Business hours and away messages): when it
-- answers, what a customer who writes outside them is told (at most once per conversation per
-- `away_every_seconds`), and the greeting a conversation's first message gets.
CREATE TABLE account_business_hours (
  account_id text PRIMARY KEY REFERENCES accounts (id),
  timezone text NOT NULL,
  -- [{day: mon … sun, from: "HH:MM", until: "HH:MM"}]
  weekly jsonb NOT NULL,
  -- ["YYYY-MM-DD"], closed all day
  holidays jsonb NOT NULL,
  -- {text} or {templateName, templateLanguage, parameters}; null: no away message
  away_message jsonb,
  away_every_seconds integer NOT NULL,
  -- The same shapes: sent for a conversation's first message (inside the hours); null: none
  greeting jsonb,
  updated_at timestamptz NOT NULL
);

-- When the conversation was last sent the away message, and whether it was greeted: each claimed
-- by one statement, so a reply is sent once whichever worker takes the message.
ALTER TABLE conversations ADD COLUMN away_sent_at timestamptz;
ALTER TABLE conversations ADD COLUMN greeted_at timestamptz;
