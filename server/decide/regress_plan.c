/*
 * regress_plan.c - what a claimed batch decides: RL_SQL_PLAN pairs each
 * claimed commit, and its children that ran the group, with its base
 * (parent, series base or nearest tested ancestor). regress.c runs it.
 */
#include "server/decide/regress_load.h"

/*
 * What to decide for the claimed entries ($1-$4 commit, machine, test,
 * variant; $5 key group): each commit, and its children that ran the group
 * (commits whose base it is), each against its base: its parent, or for a
 * patch of a series the first parent outside the series (the series base);
 * when that base has no runs of the group, the nearest first-parent ancestor
 * that has ('ancestor', at most $6 commits back), and the claimed commit is
 * then also the base of the first-parent descendants down to the next one
 * with runs. Commits without a base with runs are not decided (the change
 * points cover them). In commit-date order within a group: recoveries are
 * marked by the first later commit that undoes a regression.
 */
const char RL_SQL_PLAN[] =
	"WITH RECURSIVE e AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[],"
	"  $4::bigint[], $5::bigint[]) AS e(commit_id, machine_id, test_id, variant_id, key_group)),"
	" x AS (SELECT commit_id, key_group FROM e"
	"  UNION SELECT k.id, e.key_group FROM e CROSS JOIN LATERAL (SELECT x.id"
	"   FROM commits x, commits me WHERE me.id = e.commit_id AND me.sha IS NOT NULL"
	"   AND x.id <> me.id"
	"   AND ((x.parent_sha = me.sha AND (x.series IS NULL OR x.series IS DISTINCT FROM me.series))"
	"    OR x.series IN (SELECT f.series FROM commits f WHERE f.parent_sha = me.sha"
	"     AND f.series IS NOT NULL AND f.series IS DISTINCT FROM me.series))"
	"   AND EXISTS (SELECT 1 FROM run r WHERE r.commit_id = x.id AND r.machine_id = e.machine_id"
	"    AND r.test_id = e.test_id AND r.variant_id = e.variant_id AND r.valid)) k"
	"  UNION SELECT d.id, d.key_group FROM down d WHERE d.depth > 0 AND d.tested),"
	/* first-parent descendants without runs, down to the first with runs */
	" down(key_group, id, sha, depth, tested) AS ("
	"  SELECT e.key_group, c.id, c.sha, 0, false FROM e JOIN commits c ON c.id = e.commit_id"
	"   WHERE c.sha IS NOT NULL"
	"  UNION ALL SELECT d.key_group, k.id, k.sha, d.depth + 1, EXISTS (SELECT 1 FROM run r"
	"   JOIN key_group g ON g.id = d.key_group WHERE r.commit_id = k.id"
	"   AND r.machine_id = g.machine_id AND r.test_id = g.test_id AND r.variant_id = g.variant_id"
	"   AND r.valid)"
	"  FROM down d JOIN commits k ON k.parent_sha = d.sha AND k.series IS NULL"
	"  WHERE NOT d.tested AND d.depth < $6::int),"
	" chain(start, id, parent_sha, series, depth) AS ("
	"  SELECT c.id, c.id, c.parent_sha, c.series, 0 FROM commits c"
	"   WHERE c.id IN (SELECT commit_id FROM x)"
	"  UNION ALL SELECT chain.start, p.id, p.parent_sha, chain.series, chain.depth + 1"
	"  FROM chain JOIN commits p ON p.sha = chain.parent_sha"
	"  WHERE chain.series IS NOT NULL AND p.series = chain.series AND chain.depth < 1000),"
	" last AS (SELECT DISTINCT ON (start) start, parent_sha, series FROM chain"
	"  ORDER BY start, depth DESC),"
	" base0 AS (SELECT x.key_group, x.commit_id, b.id AS base_id,"
	"  CASE WHEN last.series IS NULL THEN 'parent' ELSE 'series_base' END AS kind,"
	"  EXISTS (SELECT 1 FROM run r JOIN key_group g ON g.id = x.key_group"
	"   WHERE r.commit_id = b.id AND r.machine_id = g.machine_id AND r.test_id = g.test_id"
	"   AND r.variant_id = g.variant_id AND r.valid) AS tested"
	"  FROM x JOIN last ON last.start = x.commit_id JOIN commits b ON b.sha = last.parent_sha"
	"  WHERE x.key_group IS NOT NULL),"
	/* no runs at the base: the nearest first-parent ancestor with runs */
	" anc(key_group, start, id, parent_sha, depth, tested) AS ("
	"  SELECT x.key_group, x.commit_id, c.id, c.parent_sha, 0, false FROM x"
	"   JOIN commits c ON c.id = x.commit_id WHERE x.key_group IS NOT NULL"
	"   AND NOT EXISTS (SELECT 1 FROM base0 WHERE base0.key_group = x.key_group"
	"    AND base0.commit_id = x.commit_id AND base0.tested)"
	"  UNION ALL SELECT a.key_group, a.start, p.id, p.parent_sha, a.depth + 1,"
	"   EXISTS (SELECT 1 FROM run r JOIN key_group g ON g.id = a.key_group"
	"    WHERE r.commit_id = p.id AND r.machine_id = g.machine_id AND r.test_id = g.test_id"
	"    AND r.variant_id = g.variant_id AND r.valid)"
	"  FROM anc a JOIN commits p ON p.sha = a.parent_sha"
	"  WHERE NOT a.tested AND a.depth < $6::int),"
	" plan AS (SELECT key_group, commit_id, base_id, kind FROM base0 WHERE tested"
	"  UNION ALL (SELECT DISTINCT ON (key_group, start) key_group, start, id, 'ancestor'"
	"  FROM anc WHERE tested ORDER BY key_group, start, depth))"
	" SELECT plan.key_group, plan.commit_id, plan.base_id, plan.kind"
	" FROM plan JOIN commits xc ON xc.id = plan.commit_id"
	" ORDER BY plan.key_group, coalesce(xc.committed_at, xc.created_at), plan.commit_id";
