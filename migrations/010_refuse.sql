-- 010_refuse: a statement that must not be committed raises its own error.
-- kperfd sends a lone run's statement and its COMMIT together, in one round
-- trip. When that run_id is stored already, the statement calls kperf_refuse,
-- so the COMMIT that follows is skipped and nothing of the re-post (its
-- machine's or commit's description) is committed; kperfd rolls back and
-- stores it the general way, which tells a repeat from a conflict. code is
-- the error's SQLSTATE (five of 0-9 A-Z), so kperfd can tell it apart.
CREATE FUNCTION kperf_refuse(code text, message text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message;
END
$$;
