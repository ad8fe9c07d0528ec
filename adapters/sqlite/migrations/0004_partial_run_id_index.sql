-- checkpointkit SQLite schema, version 4: the run_id index holds only the
-- checkpoints whose metadata has a run_id.
--
-- Every Put wrote an entry into checkpoints_by_run_id, most of them NULL
-- (graphs run without a run_id), and every index a row is in is one more
-- page to write to the WAL on each commit. DeleteForRuns looks up
-- json_extract(metadata, '$.run_id') IN (...), which implies IS NOT NULL,
-- so SQLite still uses the partial index for it (plan_test.go).
DROP INDEX checkpoints_by_run_id;
CREATE INDEX checkpoints_by_run_id
    ON checkpoints (json_extract(metadata, '$.run_id'))
    WHERE json_extract(metadata, '$.run_id') IS NOT NULL;
