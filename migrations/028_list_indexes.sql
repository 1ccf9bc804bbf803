-- Lists at a million rows (issue 27): a tenant's list must not depend on what the others hold.

-- A contact's tags, each keyed by its account ("acc_… vip"). The GIN index over (account_id, tags)
-- finds a tag through two posting lists, the account's and the tag's across all tenants: a tag
-- rare in one account but common in another (200,000 rows of a busy neighbour) made each lookup
-- step through the neighbour's rows. Keyed, a tag's posting list is the account's own.
-- PL/pgSQL so that it is never inlined: the query's expression must stay the index's.
CREATE FUNCTION contact_tag_keys(account_id text, tags text[]) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ BEGIN RETURN ARRAY(SELECT account_id || ' ' || t FROM unnest(tags) AS t); END $$;

CREATE INDEX contacts_account_tags ON contacts USING gin (contact_tag_keys(account_id, tags));
DROP INDEX contacts_tags;

-- Conversations assigned to a member, by last activity: the page is the index's first entries.
-- (account_id, assignee_id) alone left a busy member's 100,000 conversations to sort.
CREATE INDEX conversations_assignee_activity ON conversations
  (account_id, assignee_id, last_message_at DESC, id DESC) WHERE assignee_id IS NOT NULL;
DROP INDEX conversations_assignee;
