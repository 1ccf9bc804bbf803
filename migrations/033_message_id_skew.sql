-- How far apart a message's id time and its created_at may be, so that the time filters of the
-- message list can bound the walk of the account's rows by id (docs/decisions.md, issue 27, lists).
-- A message's created_at is the clock of the request or job that made it (tests move that clock);
-- its id is a UUIDv7 made by the process's own clock, a little later (after the statements in
-- between, which may wait on locks). Without a bound, "messages created before a day ago" walked
-- every message of the last day to find the first page.
--
-- ahead_ms: the most an id's time is later than its created_at; behind_ms: the most it is earlier.
-- Every statement that stores messages raises them first when its rows go further (messages/
-- id-skew.ts). Here they start from the rows stored so far, ahead_ms at least a minute for rows a
-- process of the previous version stores while this one starts (a rolling upgrade).

-- The millisecond in a TypeID: the first 10 of its 26 base32 characters are two zero bits and the
-- UUIDv7's 48-bit time. One expression without FROM, so that PostgreSQL inlines it: the scan below
-- then takes about 2 µs a row (11 s for 5,000,000 messages on a 2-core machine; with a loop over the
-- characters it took 76 s).
CREATE FUNCTION typeid_ms(id text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 1, 1)) - 1)::bigint << 45)
       | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 2, 1)) - 1)::bigint << 40)
       | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 3, 1)) - 1)::bigint << 35)
       | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 4, 1)) - 1)::bigint << 30)
       | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 5, 1)) - 1)::bigint << 25)
       | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 6, 1)) - 1)::bigint << 20)
       | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 7, 1)) - 1)::bigint << 15)
       | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 8, 1)) - 1)::bigint << 10)
       | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 9, 1)) - 1)::bigint << 5)
       | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, strpos(id, '_') + 10, 1)) - 1)::bigint << 0)
$$;

CREATE TABLE message_id_skew (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  ahead_ms bigint NOT NULL CHECK (ahead_ms >= 0),
  behind_ms bigint NOT NULL CHECK (behind_ms >= 0)
);

INSERT INTO message_id_skew (ahead_ms, behind_ms)
SELECT greatest(60000, coalesce(max(d), 0)), greatest(0, coalesce(-min(d), 0))
  FROM (SELECT typeid_ms(id) - floor(extract(epoch FROM created_at) * 1000)::bigint AS d FROM messages) AS m;
