-- 018_job_add: the one statement that queues a job. Who asks sets the
-- priority: a bisection's steps (20) before a confirmation's runs (10)
-- before a job an admin posted (0 unless given); within one, the claim
-- takes the oldest. An admin's job may name its own priority and lease.
CREATE FUNCTION kperf_job_priority(kind text) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE kind WHEN 'bisect' THEN 20 WHEN 'confirm' THEN 10 ELSE 0 END
$$;

CREATE FUNCTION kperf_job_add(p_commit bigint, p_machine bigint, p_test bigint,
			      p_variant bigint, p_runs integer, p_kind text, p_reason text,
			      p_priority integer DEFAULT NULL, p_lease_s integer DEFAULT NULL,
			      p_decision bigint DEFAULT NULL, p_bisection bigint DEFAULT NULL)
RETURNS bigint LANGUAGE sql AS $$
	INSERT INTO job (commit_id, machine_id, test_id, variant_id, runs, priority, reason,
			 lease_s, decision_id, bisection_id)
	VALUES (p_commit, p_machine, p_test, p_variant, p_runs,
		coalesce(p_priority, kperf_job_priority(p_kind)), p_reason,
		coalesce(p_lease_s, 1800), p_decision, p_bisection)
	RETURNING id
$$;
