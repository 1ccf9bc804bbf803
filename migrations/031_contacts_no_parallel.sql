-- Experiment: no parallel scans of contacts (a list's rare-tag page paid a Gather's start).
ALTER TABLE contacts SET (parallel_workers = 0);
