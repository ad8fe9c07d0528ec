-- checkpointkit SQLite schema, version 2: indexes for the access paths that
-- the primary keys do not cover.

-- List over every thread: checkpoint ID descending, ties by thread then
-- namespace, so a limited List reads only the rows it returns.
CREATE INDEX checkpoints_by_id
    ON checkpoints (checkpoint_id DESC, thread_id, checkpoint_ns);

-- List of one thread across every namespace, in the same order.
CREATE INDEX checkpoints_by_thread_id
    ON checkpoints (thread_id, checkpoint_id DESC, checkpoint_ns);

-- DeleteForRuns looks checkpoints up by metadata run_id. The expression
-- must match the one in the DELETE statements exactly.
CREATE INDEX checkpoints_by_run_id
    ON checkpoints (json_extract(metadata, '$.run_id'));
