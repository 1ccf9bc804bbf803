-- Media (docs/messaging.md § Media): files uploaded through POST /media and files customers sent,
-- kept in the database itself in 256 KiB chunks, so that every process of a deployment can stream
-- them and the embedded server needs no second store.
CREATE TABLE media (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  -- uploaded: through POST /media; inbound: a customer's file, fetched from the provider.
  direction text NOT NULL CHECK (direction IN ('uploaded', 'inbound')),
  kind text NOT NULL CHECK (kind IN ('image', 'video', 'audio', 'document', 'sticker')),
  mime_type text,
  size_bytes bigint,
  -- Hex SHA-256 of the bytes as stored.
  sha256 text,
  filename text,
  -- Where a copy is held: whatsapp_cloud (Meta's media id, uploaded or the customer's), or null.
  provider text,
  provider_media_id text,
  -- When Meta was given the file (it keeps uploads 30 days: a send after 29 uploads it again).
  provider_uploaded_at timestamptz,
  -- Inbound only: the message that carried it, and whether its bytes are here yet.
  message_id text,
  status text NOT NULL DEFAULT 'ready' CHECK (status IN ('pending', 'ready', 'failed')),
  error text,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX media_account ON media (account_id, id);
CREATE UNIQUE INDEX media_message ON media (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX media_expires ON media (expires_at);

CREATE TABLE media_chunks (
  media_id text NOT NULL REFERENCES media (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (media_id, seq)
);
