-- A history database at schema version 1, as sharq wrote it before share
-- samples, eligible times and grace GPU-seconds (migration 2). history-v1.db
-- is this script run by SQLite (go test ./acct -run TestWriteOldDatabases
-- -args -write-testdata); the PostgreSQL migration test runs it directly.
CREATE TABLE sharq_schema (version INTEGER NOT NULL);
INSERT INTO sharq_schema (version) VALUES (1);
CREATE TABLE jobs (
	id TEXT PRIMARY KEY,
	seq BIGINT NOT NULL,
	array_parent TEXT NOT NULL DEFAULT '',
	array_index INTEGER NOT NULL DEFAULT 0,
	array_indices TEXT NOT NULL DEFAULT '',
	name TEXT NOT NULL,
	user_name TEXT NOT NULL,
	uid BIGINT NOT NULL,
	gid BIGINT NOT NULL,
	share TEXT NOT NULL,
	part TEXT NOT NULL,
	nodes INTEGER NOT NULL,
	gpus_per_node INTEGER NOT NULL,
	cpus_per_node INTEGER NOT NULL,
	mem_per_node BIGINT NOT NULL,
	walltime_ms BIGINT NOT NULL,
	allocs TEXT NOT NULL,
	submit_ms BIGINT NOT NULL,
	start_ms BIGINT NOT NULL,
	end_ms BIGINT NOT NULL,
	used_ms BIGINT NOT NULL,
	runs INTEGER NOT NULL,
	preemptions INTEGER NOT NULL,
	exit_status INTEGER,
	outcome TEXT NOT NULL,
	reason TEXT NOT NULL,
	owned_gs DOUBLE PRECISION NOT NULL,
	borrowed_gs DOUBLE PRECISION NOT NULL,
	lost_gs DOUBLE PRECISION NOT NULL
);
CREATE INDEX jobs_end ON jobs (end_ms);
CREATE INDEX jobs_user_end ON jobs (user_name, end_ms);
INSERT INTO jobs VALUES ('1.lab', 1, '', 0, '', 'train', 'alice', 1001, 100, 'vision', 'gpu', 1, 2, 4, 0, 3600000,
	'gpu01:0,1', 1772323200000, 1772323260000, 1772326860000, 3600000, 1, 0, 0, 'completed', '', 7200, 0, 0);
INSERT INTO jobs VALUES ('2.lab', 2, '', 0, '', 'eval', 'bob', 1002, 100, 'nlp', 'gpu', 1, 4, 0, 0, 0,
	'gpu01:2,3,4,5', 1772323200000, 1772323300000, 1772324300000, 1000000, 2, 1, 271, 'failed', '', 2000, 2000, 1600);
INSERT INTO jobs VALUES ('3[].lab', 3, '', 0, '0-1', 'sweep', 'alice', 1001, 100, 'vision', 'gpu', 1, 1, 0, 0, 0,
	'', 1772323200000, 1772323200000, 1772330000000, 0, 0, 0, NULL, 'deleted', 'Deleted', 0, 0, 0);
