-- capacity-size.sql - what tests/bench/capacity.sh reports of the stored
-- samples, one "name value" line each (bytes; psql -At -F ' '): `sample`'s
-- leaf partitions split into the history window (built by the load) and the
-- months after it (written by kperfd's own ingest), each as heap
-- (pg_table_size: heap, TOAST, free space and visibility maps), indexes
-- (pg_indexes_size) and of them the primary key and the key-group index; rows of the months after it counted exactly; the
-- leaf density of the largest key-group index in the window and after it
-- (pgstattuple); the run documents' stored bytes per value.
WITH leaf AS (
	SELECT t.relid, to_date(substr(c.relname, 8), 'YYYYMM') < (SELECT last FROM cap_window) AS hist
	FROM pg_partition_tree('sample') t JOIN pg_class c ON c.oid = t.relid
	WHERE t.isleaf AND c.relname ~ '^sample_[0-9]{6}$'
), idx AS (
	SELECT i.indrelid AS relid, p.parentrelid AS parent, pg_relation_size(i.indexrelid) AS bytes
	FROM pg_index i JOIN pg_partition_tree('sample_pkey') p ON p.relid = i.indexrelid
	UNION ALL
	SELECT i.indrelid, p.parentrelid, pg_relation_size(i.indexrelid)
	FROM pg_index i JOIN pg_partition_tree('sample_key_group') p ON p.relid = i.indexrelid
)
SELECT x.name, x.v FROM (
	SELECT 'months_' || CASE WHEN hist THEN 'hist' ELSE 'cur' END AS name, count(*)::bigint AS v
	FROM leaf GROUP BY hist
	UNION ALL
	SELECT 'heap_' || CASE WHEN hist THEN 'hist' ELSE 'cur' END, sum(pg_table_size(relid))::bigint
	FROM leaf GROUP BY hist
	UNION ALL
	SELECT 'idx_' || CASE WHEN hist THEN 'hist' ELSE 'cur' END, sum(pg_indexes_size(relid))::bigint
	FROM leaf GROUP BY hist
	UNION ALL
	SELECT CASE WHEN i.parent = 'sample_pkey'::regclass THEN 'pk_' ELSE 'kg_' END
	       || CASE WHEN l.hist THEN 'hist' ELSE 'cur' END, sum(i.bytes)::bigint
	FROM idx i JOIN leaf l USING (relid) GROUP BY 1
	UNION ALL
	SELECT 'total_relation', sum(pg_total_relation_size(relid))::bigint
	FROM pg_partition_tree('sample') WHERE isleaf
	UNION ALL
	SELECT 'rows_cur', (SELECT count(*) FROM sample WHERE at >= (SELECT last FROM cap_window))
	UNION ALL
	SELECT 'density_' || CASE WHEN i.hist THEN 'hist' ELSE 'cur' END || '_x100',
	       (100 * (pgstatindex(i.indexrelid::regclass::text)).avg_leaf_density)::bigint
	FROM (SELECT DISTINCT ON (l.hist) l.hist, x.indexrelid
	      FROM leaf l JOIN pg_index x ON x.indrelid = l.relid
	      JOIN pg_partition_tree('sample_key_group') p ON p.relid = x.indexrelid
	      ORDER BY l.hist, pg_relation_size(x.indexrelid) DESC) i
	UNION ALL
	SELECT 'doc_cmp_x100', (100 * avg(pg_column_size(doc)) / 25000)::bigint FROM run
	WHERE run_id LIKE 'cap-cmp-%'
	UNION ALL
	SELECT 'doc_ingest_x100', (100 * avg(pg_column_size(doc)) / 1000)::bigint FROM run
	WHERE run_id LIKE 'cap-ing-%'
	UNION ALL
	SELECT 'run_table', pg_total_relation_size('run')
	UNION ALL
	SELECT 'runs', count(*) FROM run
) x WHERE x.v IS NOT NULL;
