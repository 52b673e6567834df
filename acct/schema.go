package acct

// migrations[i] brings a database from schema version i to i+1. They are
// written once and never changed: a database of every old version is in
// testdata, and the migration tests open each one. Types are the common
// subset of SQLite and PostgreSQL (times are Unix milliseconds).
var migrations = [][]string{
	// 1: the jobs table.
	{
		`CREATE TABLE jobs (
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
		)`,
		`CREATE INDEX jobs_end ON jobs (end_ms)`,
		`CREATE INDEX jobs_user_end ON jobs (user_name, end_ms)`,
	},
	// 2: eligible time and grace GPU-seconds per job; share samples; hourly
	// usage sums (reports read them instead of every row), filled from the
	// jobs already there.
	{
		`ALTER TABLE jobs ADD COLUMN eligible_ms BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN grace_gs DOUBLE PRECISION NOT NULL DEFAULT 0`,
		`CREATE INDEX jobs_share_end ON jobs (share, end_ms)`,
		`CREATE INDEX jobs_parent ON jobs (array_parent)`,
		`CREATE TABLE samples (
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
		)`,
		`CREATE TABLE usage_hourly (
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
		)`,
		`INSERT INTO usage_hourly (hour_ms, user_name, share, part, jobs, owned_gs, borrowed_gs, lost_gs, grace_gs, preemptions)
			SELECT (end_ms / 3600000) * 3600000, user_name, share, part,
				SUM(CASE WHEN array_indices = '' THEN 1 ELSE 0 END), SUM(owned_gs), SUM(borrowed_gs), SUM(lost_gs), 0,
				SUM(preemptions)
			FROM jobs GROUP BY (end_ms / 3600000) * 3600000, user_name, share, part`,
	},
	// 3: what the job was beyond its accounting (Record.Detail): the script,
	// the environment, dependencies and event log as JSON, the other submit
	// options as one JSON object. Rows written before read as empty.
	{
		`ALTER TABLE jobs ADD COLUMN script TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE jobs ADD COLUMN env TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE jobs ADD COLUMN deps TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE jobs ADD COLUMN events TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE jobs ADD COLUMN spec TEXT NOT NULL DEFAULT ''`,
	},
	// 4: the GPU use of each job's last run, as its nodes sampled it: mean
	// utilization (percent) and peak memory; the GPU-seconds sampled, at
	// < 5% use, and times the utilization; the hourly sums of the last
	// three (jobs recorded before have none: zero).
	{
		`ALTER TABLE jobs ADD COLUMN gpu_util DOUBLE PRECISION NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN gpu_peak_mem BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN sampled_gs DOUBLE PRECISION NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN idle_gs DOUBLE PRECISION NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN util_gs DOUBLE PRECISION NOT NULL DEFAULT 0`,
		`ALTER TABLE usage_hourly ADD COLUMN sampled_gs DOUBLE PRECISION NOT NULL DEFAULT 0`,
		`ALTER TABLE usage_hourly ADD COLUMN idle_gs DOUBLE PRECISION NOT NULL DEFAULT 0`,
		`ALTER TABLE usage_hourly ADD COLUMN util_gs DOUBLE PRECISION NOT NULL DEFAULT 0`,
	},
}

// SchemaVersion is the version Open brings a database to.
var SchemaVersion = len(migrations)
