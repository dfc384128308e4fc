-- 007_run_doc_lz4: run documents (~5 KB of jsonb each) compressed with lz4
-- instead of pglz. Compressing each new document was ~12% of PostgreSQL's
-- time during ingest; lz4 compresses several times faster at a similar size.
-- Documents stored before keep pglz and read as before. A server built
-- without lz4 keeps pglz.
DO $$
BEGIN
	ALTER TABLE run ALTER COLUMN doc SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
	RAISE NOTICE 'lz4 is not available in this PostgreSQL; run documents stay pglz';
END $$;
