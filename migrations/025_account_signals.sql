-- Issue 24, account signals. When the customer last told WhatsApp to stop or resume marketing
-- messages (user_preferences): a preference older than the one applied is not applied, since Meta
-- may deliver webhooks out of order. When a voice message (or audio) was played: WhatsApp's
-- `played` status, kept beside the message's status, which it does not move.
ALTER TABLE contacts ADD COLUMN marketing_preference_at timestamptz;
ALTER TABLE messages ADD COLUMN played_at timestamptz;
