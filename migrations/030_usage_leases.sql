-- The monthly count leaves the request path (src/kernel/usage-meter.ts): processes write counted
-- calls in batches and take a quota plan's calls in leases. `leased`: calls reserved by processes and
-- not yet written as `calls`; the quota holds calls + leased. `last_grant`: the block the last lease
-- statement granted (its answer), and the release a batch carries.
ALTER TABLE api_usage_monthly
  ADD COLUMN leased bigint NOT NULL DEFAULT 0,
  ADD COLUMN last_grant bigint NOT NULL DEFAULT 0;
