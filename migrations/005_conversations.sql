-- Conversations: a contact's thread with the business, opened by the customer's messages, joined
-- by the business's replies, assigned to a team member, closed and reopened (docs/conversations.md).

CREATE TABLE conversations (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  contact_id text NOT NULL,
  -- The contact's number when the conversation opened (kept if the contact is deleted or renumbered).
  phone text NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'closed')),
  -- A team member of the account, or none.
  assignee_id text,
  -- The customer's last message in this conversation.
  last_inbound_at timestamptz,
  -- The last message in either direction: the list's order ("last activity").
  last_message_at timestamptz NOT NULL,
  last_message_id text,
  -- The customer's messages since the business last wrote in this conversation.
  unread_count integer NOT NULL DEFAULT 0 CHECK (unread_count >= 0),
  opened_at timestamptz NOT NULL,
  closed_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- One open conversation per contact at a time.
CREATE UNIQUE INDEX conversations_one_open ON conversations (account_id, contact_id) WHERE status = 'open';
-- The list, by last activity (then id), with or without a status.
CREATE INDEX conversations_activity ON conversations (account_id, last_message_at DESC, id DESC);
CREATE INDEX conversations_contact ON conversations (account_id, contact_id, id);
CREATE INDEX conversations_assignee ON conversations (account_id, assignee_id) WHERE assignee_id IS NOT NULL;

-- The conversation a message belongs to (none for an outbound message sent while none was open,
-- until a conversation opens and takes it in).
ALTER TABLE messages ADD COLUMN conversation_id text;
CREATE INDEX messages_conversation ON messages (conversation_id, id) WHERE conversation_id IS NOT NULL;
