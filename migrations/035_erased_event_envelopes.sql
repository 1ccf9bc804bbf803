-- Erasures before this release replaced an erased event's whole payload with '{"erased":true}',
-- which GET /events and the stream could not read as an event (500). An erased event now keeps its
-- envelope with only `data` erased (src/modules/erasure/erase.ts, ERASED_ENVELOPE): the old ones get
-- theirs back from their columns. They held no `causedBy` to keep.
UPDATE events
   SET payload = jsonb_build_object(
         'id', id, 'type', type,
         'createdAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
         'accountId', account_id, 'data', '{"erased":true}'::jsonb)::text
 WHERE payload = '{"erased":true}';
