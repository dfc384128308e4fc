-- commits.sql - the history the read benchmarks walk: 10,000 commits in one
-- chain (sha fe00..., one hour apart), 200 metrics, 5 test configurations.
INSERT INTO commits (sha, parent_sha, subject, committed_at, branch)
SELECT 'fe' || lpad(to_hex(i), 38, '0'),
       CASE WHEN i > 1 THEN 'fe' || lpad(to_hex(i - 1), 38, '0') END,
       'mm: bench commit ' || i, now() - (10001 - i) * interval '1 hour', 'bench'
FROM generate_series(1, 10000) i;
INSERT INTO metric (name, direction)
SELECT 'wis.m' || lpad(m::text, 3, '0'), CASE WHEN m % 2 = 0 THEN 'higher' ELSE 'lower' END
FROM generate_series(0, 199) m ON CONFLICT DO NOTHING;
INSERT INTO test (suite, params)
SELECT 'will-it-scale', jsonb_build_object('nr_task', p::text) FROM unnest(ARRAY[1, 2, 4, 8, 16]) p
ON CONFLICT DO NOTHING;
INSERT INTO variant (knobs) VALUES ('{}') ON CONFLICT DO NOTHING;
SELECT kperf_sample_partitions(now() - interval '6 years', now());
