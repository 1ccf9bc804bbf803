-- No parallel scans of contacts. Lists are index walks that stop at a page; when the planner
-- misjudges a filter (a tag rare in the account but common across tenants), a parallel plan made a
-- page of 50 rows wait some 65 ms for its workers to start (docs/decisions.md, issue 27, lists).
-- The background reads of whole audiences run a little longer without workers; no request waits on them.
ALTER TABLE contacts SET (parallel_workers = 0);
