-- 0002: indexes for the access paths that do not start with a thread ID.

-- List across every thread orders by checkpoint_id DESC, then thread and
-- namespace ascending; this index yields exactly that order, so a limited
-- global list reads only the rows it returns.
CREATE INDEX checkpoints_global_order_idx
    ON {{schema}}.checkpoints (checkpoint_id DESC, thread_id, checkpoint_ns);

-- DeleteForRuns selects by metadata "run_id" (compared as jsonb).
CREATE INDEX checkpoints_run_id_idx
    ON {{schema}}.checkpoints ((metadata -> 'run_id'));
