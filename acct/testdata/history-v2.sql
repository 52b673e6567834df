-- A history database at schema version 2, as sharq wrote it before the
-- jobs' detail (script, environment, dependencies, events and submit
-- options: migration 3). The migration tests run it into an empty SQLite
-- file and PostgreSQL database; it is the DDL of versions 1 and 2 as they
-- were applied, and a few rows.
CREATE TABLE sharq_schema (version INTEGER NOT NULL);
INSERT INTO sharq_schema (version) VALUES (2);
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
ALTER TABLE jobs ADD COLUMN eligible_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN grace_gs DOUBLE PRECISION NOT NULL DEFAULT 0;
CREATE INDEX jobs_share_end ON jobs (share, end_ms);
CREATE INDEX jobs_parent ON jobs (array_parent);
CREATE TABLE samples (
	t_ms BIGINT NOT NULL,
	share TEXT NOT NULL,
	part TEXT NOT NULL,
	seconds DOUBLE PRECISION NOT NULL,
	part_gpus INTEGER NOT NULL,
	quota INTEGER NOT NULL,
	in_use INTEGER NOT NULL,
	borrowed INTEGER NOT NULL,
	lent INTEGER NOT NULL,
	PRIMARY KEY (t_ms, share)
);
CREATE TABLE usage_hourly (
	hour_ms BIGINT NOT NULL,
	user_name TEXT NOT NULL,
	share TEXT NOT NULL,
	part TEXT NOT NULL,
	jobs BIGINT NOT NULL,
	owned_gs DOUBLE PRECISION NOT NULL,
	borrowed_gs DOUBLE PRECISION NOT NULL,
	lost_gs DOUBLE PRECISION NOT NULL,
	grace_gs DOUBLE PRECISION NOT NULL,
	preemptions BIGINT NOT NULL,
	PRIMARY KEY (hour_ms, user_name, share, part)
);
INSERT INTO jobs VALUES ('1.lab', 1, '', 0, '', 'train', 'alice', 1001, 100, 'vision', 'gpu', 1, 2, 4, 0, 3600000,
	'gpu01:0,1', 1772323200000, 1772323260000, 1772326860000, 3600000, 1, 0, 0, 'completed', '', 7200, 0, 0,
	1772323201000, 30);
INSERT INTO jobs VALUES ('2[].lab', 2, '', 0, '0-1', 'sweep', 'bob', 1002, 100, 'nlp', 'gpu', 1, 1, 0, 0, 0,
	'', 1772323200000, 1772323200000, 1772330000000, 0, 0, 0, NULL, 'deleted', 'Deleted', 0, 0, 0, 0, 0);
INSERT INTO usage_hourly VALUES (1772326800000, 'alice', 'vision', 'gpu', 1, 7200, 0, 0, 30, 0);
