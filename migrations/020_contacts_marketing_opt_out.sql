-- The customer stopped marketing messages (WhatsApp's `user_preferences` webhook, or set through
-- the API): broadcast campaigns with a MARKETING template skip the contact. Distinct from
-- opted_in, which starts false for everyone (nobody has agreed yet); this starts false too (nobody
-- has refused yet) and says nothing about other categories of message.
ALTER TABLE contacts ADD COLUMN marketing_opt_out boolean NOT NULL DEFAULT false;
