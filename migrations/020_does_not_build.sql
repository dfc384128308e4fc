-- 020_does_not_build: a posted series whose kernel does not build. A lab
-- that builds its kernels (kperf-collect agent --kernel-build) fails a series
-- job with "does not build at patch K/N ..."; the series and its plan target
-- say so, and the robot replies in patch K's thread with the compiler's lines.
ALTER TABLE posted_series DROP CONSTRAINT posted_series_state_check;
ALTER TABLE posted_series ADD CONSTRAINT posted_series_state_check
	CHECK (state IN ('posted', 'queued', 'applied', 'does_not_apply', 'does_not_build',
			 'regression', 'improvement', 'clean', 'failed', 'no_base'));
ALTER TABLE plan_target DROP CONSTRAINT plan_target_state_check;
ALTER TABLE plan_target ADD CONSTRAINT plan_target_state_check
	CHECK (state IN ('queued', 'applied', 'does_not_apply', 'does_not_build', 'regression',
			 'improvement', 'clean', 'failed'));
ALTER TABLE alert DROP CONSTRAINT alert_robot_kind_check;
ALTER TABLE alert ADD CONSTRAINT alert_robot_kind_check
	CHECK (robot_kind IN ('regression', 'improvement', 'clean', 'build'));
