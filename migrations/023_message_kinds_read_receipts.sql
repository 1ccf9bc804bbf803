-- A customer's message the business marked read (POST /messages/{id}/read: WhatsApp shows the
-- customer blue ticks), and when it last showed them the typing indicator. Outbound rows keep both
-- null. The message kinds added with them (reaction, location, contacts, sticker, CTA URL and
-- location request buttons, quoted replies) live in messages.content, one key per type, as before:
-- messages.type has no CHECK to widen.
ALTER TABLE messages ADD COLUMN marked_read_at timestamptz;
ALTER TABLE messages ADD COLUMN typing_shown_at timestamptz;
