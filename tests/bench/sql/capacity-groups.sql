-- capacity-groups.sql - the lab's key groups 0 .. :ngroups - 1 of
-- tests/bench/capacity.sh (those already made are kept): group g is machine
-- lab-NNN (g, three digits) running will-it-scale nr_task=1, one run of each
-- chain commit (2,000 runs spread over the whole window, 0-19 hours after
-- their commit), 1,000 metrics x 1 iteration a run (one value per stat and
-- job, as LKP's stats are). The benchmark reads the trends of group 0's
-- first 200 metrics, and one trend of each of up to 100 groups. Runs are
-- numbered in arrival order within a step. Their samples are written by
-- capacity-month.sql.
SET client_min_messages = warning;

INSERT INTO machine (name) SELECT 'lab-' || lpad(g::text, 3, '0') FROM generate_series(0, :ngroups - 1) g
ON CONFLICT DO NOTHING;

CREATE TEMP TABLE cap_want AS
SELECT g, ma.id AS machine_id, t.id AS test_id, v.id AS variant_id
FROM generate_series(0, :ngroups - 1) g
JOIN machine ma ON ma.name = 'lab-' || lpad(g::text, 3, '0')
JOIN test t ON t.suite = 'will-it-scale' AND t.params = '{"nr_task": "1"}'
JOIN variant v ON v.knobs = '{}'
WHERE g NOT IN (SELECT g FROM cap_group);

INSERT INTO key_group (machine_id, test_id, variant_id)
SELECT machine_id, test_id, variant_id FROM cap_want ORDER BY g ON CONFLICT DO NOTHING;
INSERT INTO cap_group (key_group_id, g, nmetrics, niters)
SELECT kg.id, w.g, 1000, 1 FROM cap_want w
JOIN key_group kg USING (machine_id, test_id, variant_id);

INSERT INTO run (run_id, machine_id, commit_id, test_id, variant_id, received_at, doc)
SELECT 'cap-' || w.g || '-' || i, w.machine_id, c.id, w.test_id, w.variant_id,
       c.committed_at + (w.g % 20) * interval '1 hour' + interval '5 minutes',
       jsonb_build_object('run_id', 'cap-' || w.g || '-' || i, 'metrics', '{}'::jsonb)
FROM cap_want w CROSS JOIN generate_series(1, 2000) i
JOIN commits c ON c.sha = 'fa' || lpad(i::text, 38, '0')
ORDER BY c.committed_at + (w.g % 20) * interval '1 hour', w.g;
