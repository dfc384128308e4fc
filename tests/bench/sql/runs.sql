-- runs.sql - :nmachines machines named :'prefix'-N, each with one run of
-- every :'every'-th commit from :first to :last (commit i runs test
-- configuration i % :nconfigs), :nmetrics metrics x :iters iterations, the
-- runs received :'age' before the commit's date (so old ones fill old
-- partitions). Values: a level per metric, noise, a step at commit 5,000.
INSERT INTO machine (name) SELECT :'prefix' || '-' || k FROM generate_series(0, :nmachines - 1) k
ON CONFLICT DO NOTHING;
INSERT INTO run (run_id, machine_id, commit_id, test_id, variant_id, received_at, doc)
SELECT :'prefix' || '-' || k || '-' || i, ma.id, c.id, t.id, v.id,
       c.committed_at - :'age'::interval,
       jsonb_build_object('run_id', :'prefix' || '-' || k || '-' || i, 'metrics', '{}'::jsonb)
FROM generate_series(0, :nmachines - 1) k
JOIN machine ma ON ma.name = :'prefix' || '-' || k
CROSS JOIN generate_series(:first, :last, :every) i
JOIN commits c ON c.sha = 'fe' || lpad(to_hex(i), 38, '0')
JOIN test t ON t.suite = 'will-it-scale'
 AND t.params = jsonb_build_object('nr_task', (ARRAY[1, 2, 4, 8, 16])[1 + i % :nconfigs]::text)
JOIN variant v ON v.knobs = '{}';
INSERT INTO key_group (machine_id, test_id, variant_id)
SELECT DISTINCT machine_id, test_id, variant_id FROM run WHERE run_id LIKE :'prefix' || '-%'
ON CONFLICT DO NOTHING;
INSERT INTO sample (at, run_id, metric_id, iteration, value, key_group_id)
SELECT r.received_at, r.id, m.id, it,
       1000 + 10 * (m.id % 200) + 20 * (random() - 0.5)
       + CASE WHEN c.id % 10000 > 5000 AND m.id % 7 = 0 THEN 40 ELSE 0 END,
       g.id
FROM run r JOIN commits c ON c.id = r.commit_id
JOIN key_group g USING (machine_id, test_id, variant_id)
CROSS JOIN (SELECT id FROM metric WHERE name LIKE 'wis.m%' ORDER BY name LIMIT :nmetrics) m
CROSS JOIN generate_series(0, :iters - 1) it
WHERE r.run_id LIKE :'prefix' || '-%';
