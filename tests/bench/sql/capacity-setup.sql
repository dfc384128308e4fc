-- capacity-setup.sql - the fixed part of tests/bench/capacity.sh's history,
-- made once before the first step. Variables: :months (the history's window:
-- that many whole months before the current one), :pairs (compare pairs,
-- one more is made for the warm-up read).
--   metric   lab.m0000 ... lab.m4999, one id range (the lab's runs carry
--            the first 1,000, the compare's runs all 5,000)
--   commits  a first-parent chain fa...0001 to fa...2000 spread over the
--            window (every lab key group runs each: a 2,000-point trend
--            whose runs span every month), and :pairs + 1 review pairs
--            fb...j (base) and fc...j (the base patched), spread over it too
--   runs     machine cmp-0, vm-scalability: 3 runs of each review commit,
--            5,000 metrics x 5 iterations each, with their documents as
--            kperfd stores posted runs (so the compare decompresses real
--            ones); their samples are written month by month with the
--            rest (capacity-month.sql), from the same values (cap_value)
-- cap_group says which key groups the load writes and how many metrics and
-- iterations a run of each has; the key groups themselves are kperf's.
SET client_min_messages = warning;

CREATE TABLE cap_window AS
SELECT (date_trunc('month', now() AT TIME ZONE 'UTC') - :months * interval '1 month') AT TIME ZONE 'UTC'
           AS first,
       date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS last;

CREATE TABLE cap_group (
	key_group_id integer PRIMARY KEY,
	g            integer NOT NULL UNIQUE, -- lab group number; -1: the compare's
	nmetrics     integer NOT NULL,
	niters       integer NOT NULL
);

-- A sample's value: a level per metric, 1% of noise from a hash of (run,
-- metric, iteration) so that documents and samples agree without storing
-- the values twice here; the review targets 5% higher on every 10th metric,
-- the chain 4% higher from commit 1,001 on every 7th (a step in the trends).
CREATE FUNCTION cap_value(run bigint, k integer, it integer, target boolean, ci integer)
RETURNS double precision IMMUTABLE PARALLEL SAFE LANGUAGE sql AS $$
	SELECT (1000 + 10 * (k % 500))::float8
	       * CASE WHEN target AND k % 10 = 0 THEN 1.05::float8
	              WHEN ci > 1000 AND k % 7 = 0 THEN 1.04::float8 ELSE 1::float8 END
	       * (1::float8 + hashint8(run * 65536 + k * 8 + it)::float8 * 4.656612873077393e-12::float8)
$$;

INSERT INTO metric (name, direction)
SELECT 'lab.m' || lpad(k::text, 4, '0'), CASE WHEN k % 2 = 0 THEN 'higher' ELSE 'lower' END
FROM generate_series(0, 4999) k ORDER BY k;
INSERT INTO test (suite, params) VALUES ('will-it-scale', '{"nr_task": "1"}'), ('vm-scalability', '{}')
ON CONFLICT DO NOTHING;
INSERT INTO variant (knobs) VALUES ('{}') ON CONFLICT DO NOTHING;
INSERT INTO machine (name) VALUES ('cmp-0') ON CONFLICT DO NOTHING;

-- the chain: the last commit two days before the window ends, so that every
-- run (up to 19 hours after its commit) lands in a history month
INSERT INTO commits (sha, parent_sha, subject, committed_at, branch)
SELECT 'fa' || lpad(i::text, 38, '0'),
       CASE WHEN i > 1 THEN 'fa' || lpad((i - 1)::text, 38, '0') END,
       'mm: capacity commit ' || i,
       w.first + (i - 1) * ((w.last - w.first - interval '2 days') / 1999), 'capacity'
FROM cap_window w, generate_series(1, 2000) i ORDER BY i;

INSERT INTO commits (sha, parent_sha, subject, committed_at, branch)
SELECT s.kind || lpad(j::text, 38, '0'),
       CASE s.kind WHEN 'fb' THEN 'fa' || lpad((1 + j * 1999 / (:pairs + 1))::text, 38, '0')
                   ELSE 'fb' || lpad(j::text, 38, '0') END,
       CASE s.kind WHEN 'fb' THEN 'review base ' ELSE 'mm: review patch ' END || j,
       w.first + (j + 0.5) * ((w.last - w.first - interval '2 days') / (:pairs + 1))
       + CASE s.kind WHEN 'fc' THEN interval '1 hour' ELSE interval '0' END,
       'review'
FROM cap_window w, generate_series(0, :pairs) j, (VALUES ('fb'), ('fc')) s(kind)
ORDER BY j, s.kind;

INSERT INTO run (run_id, machine_id, commit_id, test_id, variant_id, received_at, doc)
SELECT 'cap-cmp-' || left(c.sha, 2) || '-' || ltrim(substr(c.sha, 3), '0') || '-' || r,
       ma.id, c.id, t.id, v.id, c.committed_at + r * interval '20 minutes', '{}'
FROM commits c, generate_series(1, 3) r, machine ma, test t, variant v
WHERE (c.sha LIKE 'fb%' OR c.sha LIKE 'fc%') AND ma.name = 'cmp-0'
  AND t.suite = 'vm-scalability' AND t.params = '{}' AND v.knobs = '{}'
ORDER BY c.committed_at + r * interval '20 minutes';

UPDATE run r SET doc = jsonb_build_object(
	'run_id', r.run_id, 'machine', jsonb_build_object('name', 'cmp-0'),
	'kernel', jsonb_build_object('commit', c.sha),
	'test', jsonb_build_object('suite', 'vm-scalability'),
	'metrics', (SELECT jsonb_object_agg('lab.m' || lpad(k::text, 4, '0'),
			(SELECT jsonb_agg(cap_value(r.id, k, it, c.sha LIKE 'fc%', 0) ORDER BY it)
			 FROM generate_series(0, 4) it))
		    FROM generate_series(0, 4999) k))
FROM commits c WHERE c.id = r.commit_id AND r.run_id LIKE 'cap-cmp-%';

INSERT INTO key_group (machine_id, test_id, variant_id)
SELECT DISTINCT machine_id, test_id, variant_id FROM run WHERE run_id LIKE 'cap-cmp-%'
ON CONFLICT DO NOTHING;
INSERT INTO cap_group (key_group_id, g, nmetrics, niters)
SELECT g.id, -1, 5000, 5 FROM key_group g JOIN machine ma ON ma.id = g.machine_id
WHERE ma.name = 'cmp-0';
