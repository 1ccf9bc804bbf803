-- The agent's own tools in the inbox (docs/conversations.md § The team inbox): canned responses,
-- private notes, labels on conversations, snooze.

-- Saved replies, found by their shortcut as the agent types `/shortcut` (one per account).
CREATE TABLE canned_responses (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  shortcut text NOT NULL,
  title text NOT NULL,
  -- A Liquid template over the contact and the conversation (automation/templating.ts).
  text text NOT NULL,
  -- {mediaId} of an upload (POST /media), sent with the text as its caption; or null.
  media jsonb,
  -- {name, language, parameters}: the approved template sent instead when the window is closed.
  template jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (account_id, shortcut)
);

-- A note agents leave on a conversation for each other: never a message, never sent.
CREATE TABLE conversation_notes (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  -- The team member who wrote it (null: an API key that named nobody, or a member since removed).
  author_id text,
  text text NOT NULL,
  -- The team members it mentions (each told by conversation.mentioned).
  mentions text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL
);
CREATE INDEX conversation_notes_by_conversation ON conversation_notes (conversation_id, id);

-- Labels are the conversation's (a matter's kind: refund, vip), not the contact's tags.
ALTER TABLE conversations ADD COLUMN labels text[] NOT NULL DEFAULT '{}';
CREATE INDEX conversations_labels ON conversations USING gin (labels);
-- Hidden from the open list until then, or until the customer writes; the wake scan's index.
ALTER TABLE conversations ADD COLUMN snoozed_until timestamptz;
CREATE INDEX conversations_snoozed ON conversations (snoozed_until) WHERE snoozed_until IS NOT NULL;
