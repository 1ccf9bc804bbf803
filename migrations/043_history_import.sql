-- A coexistence number's chat history (Meta's `history` webhooks), as Meta asks integrators to take
-- it: stored first, imported afterwards (modules/conversations/history-import.ts). A chunk is
-- stored once (Meta retries webhooks) and imported once, in one transaction; its payload, which
-- holds the customers' messages, is cleared once they are messages.
CREATE TABLE history_chunks (
  account_id text NOT NULL REFERENCES accounts (id),
  phase integer NOT NULL,
  chunk_order integer NOT NULL,
  progress integer NOT NULL,
  -- The chunk's threads as parsed (channels/types.ts HistoryChunk); null once imported.
  payload jsonb,
  messages integer NOT NULL,
  received_at timestamptz NOT NULL,
  imported_at timestamptz,
  PRIMARY KEY (account_id, phase, chunk_order)
);

-- The conversation a customer's imported history lives in: one per contact, closed, in the past,
-- so that the chunks of one thread (and its later phases) add to it.
CREATE TABLE history_threads (
  account_id text NOT NULL REFERENCES accounts (id),
  contact_id text NOT NULL,
  conversation_id text NOT NULL,
  PRIMARY KEY (account_id, contact_id)
);
