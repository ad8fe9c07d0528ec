package postgres

import "strings"

// The delta-channel statements share one recursive walk, chain: starting
// from a set of (thread, namespace, checkpoint, wanted channels) rows, it
// follows parent_checkpoint_id one ancestor at a time, within the same
// thread and namespace, and for each ancestor records which wanted channels
// hold a stored value there (has), and its channels and versions. A
// channel found is not wanted further back; the walk of a start ends when
// no channel is wanted any more or the parent is missing. UNION (not UNION
// ALL) discards a row already produced, so walks that meet share their
// rows, and a parent chain that loops ends.
//
// A channel holds a stored value at a checkpoint when the checkpoint lists
// a version for it and the blob of that version has a non-NULL value: a
// version whose blob is NULL (the channel had no value) does not count.
//
// Every lookup the walk makes is a primary-key probe with every key column
// bound, whatever the statistics: the ancestor by (thread, namespace,
// checkpoint ID), each blob by (thread, namespace, channel, version) in a
// scalar subquery with LIMIT 1. (As an EXISTS, the planner turned the blob
// lookup into a semi-join; on tables not yet analysed it then scanned every
// blob of the thread for each ancestor, 15-30 ms at 49 ancestors.) So a
// walk costs a few buffers per ancestor, however long the thread around it
// (TestDeltaPlanBounded checks this with EXPLAIN, before and after
// ANALYZE, with custom and generic plans).

// blobHasValue is the probe "the blob of channel ch, version ver of the
// checkpoint of alias a holds a value": a scalar subquery, so that it stays
// a parameterised primary-key lookup and is never pulled up into a join.
func blobHasValue(a, ch, ver string) string {
	return `(SELECT b.value IS NOT NULL FROM {b} b
			WHERE b.thread_id = ` + a + `.thread_id AND b.checkpoint_ns = ` + a + `.checkpoint_ns
				AND b.channel = ` + ch + ` AND b.version = ` + ver + ` LIMIT 1)`
}

// chainCTE returns the recursive CTE "chain" whose anchor rows come from
// start, a SELECT of (thread_id, checkpoint_ns, checkpoint_id, want): the
// walk visits the parent of each start row first, never the start itself.
// The text keeps its {c} and {b} placeholders: the caller replaces them
// once, as the quoted schema name may itself hold "{c}".
func chainCTE(start string) string {
	has := func(want string) string {
		return `(SELECT ARRAY(
		SELECT cv.channel FROM unnest(c.channels, c.versions) AS cv(channel, version)
		WHERE cv.channel = ANY(` + want + `) AND ` + blobHasValue("c", "cv.channel", "cv.version") + `) AS has)`
	}
	return `chain(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, channels, versions, want, has) AS (
	SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.channels, c.versions, st.want, h.has
	FROM (` + start + `) st
	JOIN {c} s ON s.thread_id = st.thread_id AND s.checkpoint_ns = st.checkpoint_ns AND s.checkpoint_id = st.checkpoint_id
	JOIN {c} c ON c.thread_id = s.thread_id AND c.checkpoint_ns = s.checkpoint_ns AND c.checkpoint_id = s.parent_checkpoint_id
	CROSS JOIN LATERAL ` + has("st.want") + ` h
	WHERE cardinality(st.want) > 0
	UNION
	SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.channels, c.versions, n.want, h.has
	FROM chain ch
	CROSS JOIN LATERAL (SELECT ARRAY(SELECT x FROM unnest(ch.want) AS x WHERE x <> ALL (ch.has)) AS want) n
	JOIN {c} c ON c.thread_id = ch.thread_id AND c.checkpoint_ns = ch.checkpoint_ns AND c.checkpoint_id = ch.parent_checkpoint_id
	CROSS JOIN LATERAL ` + has("n.want") + ` h
	WHERE cardinality(n.want) > 0
)`
}

// deltaChannelsSQL is the SQL expression of spec.DeltaChannels over the
// metadata column of alias a: the keys of its counters_since_delta_snapshot
// object (unescaped, see escapeNUL; channel names hold no NUL), or an empty
// array.
func deltaChannelsSQL(a string) string {
	m := a + `.metadata -> 'counters_since_delta_snapshot'`
	return `(CASE WHEN jsonb_typeof(` + m + `) = 'object' THEN ARRAY(
		SELECT replace(k, E'\x011', E'\x01') FROM jsonb_object_keys(` + m + `) AS k) ELSE '{}'::text[] END)`
}

// deltaQueries are the statements of DeltaHistory and of the delta-safe
// Prune(KeepLatest) and DeleteForRuns.
type deltaQueries struct {
	history     string
	pruneLatest string
	deleteRuns  string
}

func buildDeltaQueries(q queries) deltaQueries {
	r := strings.NewReplacer("{c}", q.checkpoints, "{b}", q.blobs, "{w}", q.writes)
	var d deltaQueries

	// $1 thread, $2 namespace, $3 checkpoint ID ('' for the latest), $4
	// channels. One statement returns the target (kind 0, its parent), the
	// ancestors walked (kind 1, parent and channels seeded there), their
	// writes to the channels still wanted there (kind 2) and the seed values
	// (kind 3). The client follows the parent links from the target.
	//
	// The target is one of two branches, each an index probe whatever $3
	// is (a generic plan of "$3 = '' OR checkpoint_id = $3" would scan the
	// thread backwards to it). The walk's rows are then joined to writes
	// and blobs by lateral subqueries per ancestor, fenced (OFFSET 0, LIMIT
	// 1) so that the planner keeps them primary-key probes rather than
	// joining, by hash or by a partial key, every write or blob of the
	// thread.
	d.history = r.Replace(`WITH RECURSIVE target AS (
	(SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, $4::text[] AS want
	FROM {c} c
	WHERE $3::text = '' AND c.thread_id = $1 AND c.checkpoint_ns = $2
	ORDER BY c.checkpoint_id DESC
	LIMIT 1)
	UNION ALL
	SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, $4::text[]
	FROM {c} c
	WHERE $3::text <> '' AND c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3::text
), ` + chainCTE(`SELECT thread_id, checkpoint_ns, checkpoint_id, want FROM target`) + `
SELECT 0 AS kind, t.checkpoint_id, t.parent_checkpoint_id, NULL::text[] AS has,
	NULL::text AS task_path, NULL::text AS task_id, NULL::integer AS idx, NULL::text AS channel, NULL::bytea AS value
FROM target t
UNION ALL
SELECT 1, ch.checkpoint_id, ch.parent_checkpoint_id, ch.has, NULL, NULL, NULL, NULL, NULL
FROM chain ch
UNION ALL
SELECT 2, ch.checkpoint_id, NULL, NULL, w.task_path, w.task_id, w.idx, w.channel, w.value
FROM chain ch
CROSS JOIN LATERAL (
	SELECT w.task_path, w.task_id, w.idx, w.channel, w.value FROM {w} w
	WHERE w.thread_id = ch.thread_id AND w.checkpoint_ns = ch.checkpoint_ns
		AND w.checkpoint_id = ch.checkpoint_id AND w.channel = ANY(ch.want)
	OFFSET 0) w
UNION ALL
SELECT 3, ch.checkpoint_id, NULL, NULL, NULL, NULL, NULL, cv.channel, v.value
FROM chain ch
CROSS JOIN LATERAL unnest(ch.channels, ch.versions) AS cv(channel, version)
CROSS JOIN LATERAL (
	SELECT b.value FROM {b} b
	WHERE b.thread_id = ch.thread_id AND b.checkpoint_ns = ch.checkpoint_ns
		AND b.channel = cv.channel AND b.version = cv.version AND b.value IS NOT NULL
	LIMIT 1) v
WHERE cv.channel = ANY(ch.has)`)

	// KeepLatest, delta-safe: one statement (one snapshot) keeps the latest
	// checkpoint of every namespace of the listed threads and the
	// ancestors its delta channels need back to their seeds (SPEC.md
	// DELTA-12), with their writes and the values they reference.
	d.pruneLatest = r.Replace(`WITH RECURSIVE latest AS (
	SELECT DISTINCT ON (thread_id, checkpoint_ns) thread_id, checkpoint_ns, checkpoint_id, metadata
	FROM {c} WHERE thread_id = ANY($1::text[])
	ORDER BY thread_id, checkpoint_ns, checkpoint_id DESC
), ` + chainCTE(`SELECT l.thread_id, l.checkpoint_ns, l.checkpoint_id, `+deltaChannelsSQL("l")+` AS want FROM latest l`) + `,
keep AS (
	SELECT thread_id, checkpoint_ns, checkpoint_id FROM latest
	UNION
	SELECT thread_id, checkpoint_ns, checkpoint_id FROM chain
), dc AS (
	DELETE FROM {c} c WHERE c.thread_id = ANY($1::text[]) AND NOT EXISTS (
		SELECT 1 FROM keep k
		WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = c.checkpoint_ns AND k.checkpoint_id = c.checkpoint_id)
), dw AS (
	DELETE FROM {w} w WHERE w.thread_id = ANY($1::text[]) AND NOT EXISTS (
		SELECT 1 FROM keep k
		WHERE k.thread_id = w.thread_id AND k.checkpoint_ns = w.checkpoint_ns AND k.checkpoint_id = w.checkpoint_id)
)
DELETE FROM {b} b WHERE b.thread_id = ANY($1::text[]) AND NOT EXISTS (
	SELECT 1 FROM keep k
	JOIN {c} c ON c.thread_id = k.thread_id AND c.checkpoint_ns = k.checkpoint_ns AND c.checkpoint_id = k.checkpoint_id
	CROSS JOIN LATERAL unnest(c.channels, c.versions) AS cv(channel, version)
	WHERE k.thread_id = b.thread_id AND k.checkpoint_ns = b.checkpoint_ns
		AND cv.channel = b.channel AND cv.version = b.version)`)

	// DeleteForRuns, delta-safe: the checkpoints of the runs go, with their
	// writes, except those on the delta chain of a checkpoint that stays
	// (one not of those runs, in a thread and namespace the runs touch):
	// SPEC.md DELTA-13.
	d.deleteRuns = r.Replace(`WITH RECURSIVE doomed AS (
	SELECT thread_id, checkpoint_ns, checkpoint_id FROM {c} WHERE metadata -> 'run_id' = ANY($1::jsonb[])
), survivors AS (
	SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, ` + deltaChannelsSQL("c") + ` AS want
	FROM {c} c
	WHERE (c.thread_id, c.checkpoint_ns) IN (SELECT thread_id, checkpoint_ns FROM doomed)
		AND (c.metadata -> 'run_id' = ANY($1::jsonb[])) IS NOT TRUE
		AND jsonb_typeof(c.metadata -> 'counters_since_delta_snapshot') = 'object'
), ` + chainCTE(`SELECT thread_id, checkpoint_ns, checkpoint_id, want FROM survivors`) + `,
dc AS (
	DELETE FROM {c} c USING doomed d
	WHERE c.thread_id = d.thread_id AND c.checkpoint_ns = d.checkpoint_ns AND c.checkpoint_id = d.checkpoint_id
		AND NOT EXISTS (SELECT 1 FROM chain k
			WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = c.checkpoint_ns AND k.checkpoint_id = c.checkpoint_id)
	RETURNING c.thread_id, c.checkpoint_ns, c.checkpoint_id
)
DELETE FROM {w} w USING dc
WHERE w.thread_id = dc.thread_id AND w.checkpoint_ns = dc.checkpoint_ns AND w.checkpoint_id = dc.checkpoint_id`)
	return d
}
