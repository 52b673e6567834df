package acct

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// dialect holds what differs between the SQL backends.
type dialect struct {
	name string
	// numbered placeholders ($1) instead of ?
	numbered bool
	// lock is run first in the migration transaction ("" = none).
	lock string
}

// sqlStore is the Store over database/sql that both backends share.
type sqlStore struct {
	db     *sql.DB
	d      dialect
	where  string // the file or server, for errors
	closed atomic.Bool
}

// q rewrites ? placeholders for the dialect.
func (s *sqlStore) q(query string) string {
	if !s.d.numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// migrate brings the schema to SchemaVersion in one transaction.
func (s *sqlStore) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history %s: begin migration: %w", s.where, err)
	}
	defer tx.Rollback()
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return fmt.Errorf("history %s: lock for migration: %w", s.where, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS sharq_schema (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("history %s: schema table: %w", s.where, err)
	}
	var v int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM sharq_schema`).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO sharq_schema (version) VALUES (0)`); err != nil {
			return fmt.Errorf("history %s: schema version: %w", s.where, err)
		}
	case err != nil:
		return fmt.Errorf("history %s: schema version: %w", s.where, err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w: %s has version %d, this sharq knows %d", ErrSchema, s.where, v, SchemaVersion)
	}
	if v == SchemaVersion {
		return tx.Commit()
	}
	for i := v; i < SchemaVersion; i++ {
		for _, stmt := range migrations[i] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("history %s: migration to version %d: %w", s.where, i+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE sharq_schema SET version = ?`), SchemaVersion); err != nil {
		return fmt.Errorf("history %s: schema version: %w", s.where, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history %s: commit migration: %w", s.where, err)
	}
	return nil
}

// Version reports the database's schema version.
func (s *sqlStore) version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT version FROM sharq_schema`).Scan(&v)
	return v, err
}

func (s *sqlStore) check() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

const jobColumns = `id, seq, array_parent, array_index, array_indices, name, user_name, uid, gid, share, part,
	nodes, gpus_per_node, cpus_per_node, mem_per_node, walltime_ms, allocs,
	submit_ms, eligible_ms, start_ms, end_ms, used_ms, runs, preemptions, exit_status, outcome, reason,
	owned_gs, borrowed_gs, lost_gs, grace_gs, gpu_util, gpu_peak_mem, sampled_gs, idle_gs, util_gs`

var upsertJob = func() string {
	all := jobColumns + ", " + detailColumns
	cols := strings.Split(strings.Join(strings.Fields(all), ""), ",")
	var set []string
	for _, c := range cols[1:] {
		set = append(set, c+" = excluded."+c)
	}
	return `INSERT INTO jobs (` + all + `) VALUES (` + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") +
		`) ON CONFLICT (id) DO UPDATE SET ` + strings.Join(set, ", ")
}()

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func (s *sqlStore) Record(ctx context.Context, recs ...Record) error {
	if err := s.check(); err != nil {
		return err
	}
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return err
		}
	}
	if len(recs) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history %s: %w", s.where, err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, s.q(upsertJob))
	if err != nil {
		return fmt.Errorf("history %s: %w", s.where, err)
	}
	defer st.Close()
	prev, err := tx.PrepareContext(ctx, s.q(`SELECT end_ms, user_name, share, part, array_indices, owned_gs, borrowed_gs,
		lost_gs, grace_gs, preemptions, sampled_gs, idle_gs, util_gs FROM jobs WHERE id = ?`))
	if err != nil {
		return fmt.Errorf("history %s: %w", s.where, err)
	}
	defer prev.Close()
	bump, err := tx.PrepareContext(ctx, s.q(upsertHourly))
	if err != nil {
		return fmt.Errorf("history %s: %w", s.where, err)
	}
	defer bump.Close()
	for i := range recs {
		r := &recs[i]
		// A record stored before leaves its hourly sums first.
		var old hourly
		switch err := prev.QueryRowContext(ctx, r.ID).Scan(&old.endMS, &old.user, &old.share, &old.part, &old.indices,
			&old.owned, &old.borrowed, &old.lost, &old.grace, &old.preemptions, &old.sampled, &old.idle, &old.util); {
		case err == nil:
			if err := old.add(ctx, bump, -1); err != nil {
				return fmt.Errorf("history %s: job %s: %w", s.where, r.ID, err)
			}
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("history %s: job %s: %w", s.where, r.ID, err)
		}
		var exit any
		if r.ExitStatus != nil {
			exit = int64(*r.ExitStatus)
		}
		script, env, deps, events, spec := r.Detail.encode()
		if _, err := st.ExecContext(ctx, r.ID, int64(r.Seq), r.ArrayParent, r.ArrayIndex, r.ArrayIndices, r.Name, r.User,
			int64(r.UID), int64(r.GID), r.Share, r.Partition,
			r.Nodes, r.GPUsPerNode, r.CPUsPerNode, r.MemPerNode, r.Walltime.Milliseconds(), formatAllocs(r.Allocs),
			ms(r.Submit), ms(r.Eligible), ms(r.Start), ms(r.End), r.Used.Milliseconds(), r.Runs, r.Preemptions, exit,
			string(r.Outcome), r.Reason,
			r.OwnedGPUSeconds, r.BorrowedGPUSeconds, r.LostGPUSeconds, r.GraceGPUSeconds,
			r.GPUMeanUtil, r.GPUPeakMem, r.SampledGPUSeconds, r.IdleGPUSeconds, r.UtilGPUSeconds,
			script, env, deps, events, spec); err != nil {
			return fmt.Errorf("history %s: record job %s: %w", s.where, r.ID, err)
		}
		h := hourly{endMS: ms(r.End), user: r.User, share: r.Share, part: r.Partition, indices: r.ArrayIndices,
			owned: r.OwnedGPUSeconds, borrowed: r.BorrowedGPUSeconds, lost: r.LostGPUSeconds, grace: r.GraceGPUSeconds,
			preemptions: int64(r.Preemptions), sampled: r.SampledGPUSeconds, idle: r.IdleGPUSeconds, util: r.UtilGPUSeconds}
		if err := h.add(ctx, bump, 1); err != nil {
			return fmt.Errorf("history %s: job %s: %w", s.where, r.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history %s: commit: %w", s.where, err)
	}
	return nil
}

const hourMS = int64(time.Hour / time.Millisecond)

const upsertHourly = `INSERT INTO usage_hourly (hour_ms, user_name, share, part, jobs, owned_gs, borrowed_gs, lost_gs,
	grace_gs, preemptions, sampled_gs, idle_gs, util_gs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (hour_ms, user_name, share, part) DO UPDATE SET
	jobs = usage_hourly.jobs + excluded.jobs, owned_gs = usage_hourly.owned_gs + excluded.owned_gs,
	borrowed_gs = usage_hourly.borrowed_gs + excluded.borrowed_gs, lost_gs = usage_hourly.lost_gs + excluded.lost_gs,
	grace_gs = usage_hourly.grace_gs + excluded.grace_gs, preemptions = usage_hourly.preemptions + excluded.preemptions,
	sampled_gs = usage_hourly.sampled_gs + excluded.sampled_gs, idle_gs = usage_hourly.idle_gs + excluded.idle_gs,
	util_gs = usage_hourly.util_gs + excluded.util_gs`

// hourly is one job's contribution to the hourly sums.
type hourly struct {
	endMS                        int64
	user, share, part, indices   string
	owned, borrowed, lost, grace float64
	preemptions                  int64
	sampled, idle, util          float64
}

// add adds (sign 1) or removes (sign -1) the job from its hour's sums.
func (h *hourly) add(ctx context.Context, bump *sql.Stmt, sign int64) error {
	jobs := sign
	if h.indices != "" {
		jobs = 0 // an array parent: its subjobs count
	}
	f := float64(sign)
	_, err := bump.ExecContext(ctx, floorHour(h.endMS), h.user, h.share, h.part, jobs, f*h.owned, f*h.borrowed, f*h.lost,
		f*h.grace, sign*h.preemptions, f*h.sampled, f*h.idle, f*h.util)
	return err
}

func floorHour(ms int64) int64 {
	h := ms / hourMS * hourMS
	if ms < 0 && h != ms {
		h -= hourMS
	}
	return h
}

func (s *sqlStore) Sample(ctx context.Context, samples ...ShareSample) error {
	if err := s.check(); err != nil {
		return err
	}
	for i := range samples {
		if err := samples[i].Validate(); err != nil {
			return err
		}
	}
	if len(samples) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("history %s: %w", s.where, err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, s.q(`INSERT INTO samples (t_ms, share, part, seconds, part_gpus, quota, in_use, borrowed, lent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (t_ms, share) DO UPDATE SET part = excluded.part,
		seconds = excluded.seconds, part_gpus = excluded.part_gpus, quota = excluded.quota, in_use = excluded.in_use,
		borrowed = excluded.borrowed, lent = excluded.lent`))
	if err != nil {
		return fmt.Errorf("history %s: %w", s.where, err)
	}
	defer st.Close()
	for _, x := range samples {
		if _, err := st.ExecContext(ctx, ms(x.Time), x.Share, x.Partition, x.Seconds, x.PartitionGPUs, x.Quota, x.InUse,
			x.Borrowed, x.Lent); err != nil {
			return fmt.Errorf("history %s: sample of %s: %w", s.where, x.Share, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("history %s: commit: %w", s.where, err)
	}
	return nil
}

func (s *sqlStore) Jobs(ctx context.Context, f JobFilter) ([]Record, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	var where []string
	var args []any
	add := func(cond string, a ...any) { where = append(where, cond); args = append(args, a...) }
	if f.ID != "" {
		if strings.Contains(f.ID, "[]") {
			add("(id = ? OR array_parent = ?)", f.ID, f.ID)
		} else {
			add("id = ?", f.ID)
		}
	}
	if f.User != "" {
		add("user_name = ?", f.User)
	}
	if f.Share != "" {
		add("share = ?", f.Share)
	}
	if f.Outcome != "" {
		add("outcome = ?", string(f.Outcome))
	}
	if !f.Start.IsZero() {
		add("end_ms >= ?", ms(f.Start))
	}
	if !f.End.IsZero() {
		add("end_ms < ?", ms(f.End))
	}
	limit := f.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	cols := jobColumns
	if f.Detail {
		cols += ", " + detailColumns
	}
	query := `SELECT ` + cols + ` FROM jobs`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	if f.Newest {
		query += ` ORDER BY end_ms DESC, seq DESC, id DESC LIMIT ` + strconv.Itoa(limit)
	} else {
		query += ` ORDER BY end_ms, seq, id LIMIT ` + strconv.Itoa(limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: jobs: %w", s.where, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		var seq, uid, gid, wall, submit, elig, start, end, used int64
		var exit sql.NullInt64
		var allocs, outcome string
		var detail [5]string
		dest := []any{&r.ID, &seq, &r.ArrayParent, &r.ArrayIndex, &r.ArrayIndices, &r.Name, &r.User, &uid, &gid,
			&r.Share, &r.Partition, &r.Nodes, &r.GPUsPerNode, &r.CPUsPerNode, &r.MemPerNode, &wall, &allocs,
			&submit, &elig, &start, &end, &used, &r.Runs, &r.Preemptions, &exit, &outcome, &r.Reason,
			&r.OwnedGPUSeconds, &r.BorrowedGPUSeconds, &r.LostGPUSeconds, &r.GraceGPUSeconds,
			&r.GPUMeanUtil, &r.GPUPeakMem, &r.SampledGPUSeconds, &r.IdleGPUSeconds, &r.UtilGPUSeconds}
		if f.Detail {
			dest = append(dest, &detail[0], &detail[1], &detail[2], &detail[3], &detail[4])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("history %s: jobs: %w", s.where, err)
		}
		if f.Detail {
			if r.Detail, err = decodeDetail(detail[0], detail[1], detail[2], detail[3], detail[4]); err != nil {
				return nil, fmt.Errorf("history %s: job %s: %w", s.where, r.ID, err)
			}
		}
		r.Seq, r.UID, r.GID = uint64(seq), uint32(uid), uint32(gid)
		r.Walltime, r.Used = time.Duration(wall)*time.Millisecond, time.Duration(used)*time.Millisecond
		r.Submit, r.Eligible, r.Start, r.End = fromMS(submit), fromMS(elig), fromMS(start), fromMS(end)
		r.Outcome = Outcome(outcome)
		if exit.Valid {
			v := int(exit.Int64)
			r.ExitStatus = &v
		}
		if r.Allocs, err = parseAllocs(allocs); err != nil {
			return nil, fmt.Errorf("history %s: job %s: %w", s.where, r.ID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: jobs: %w", s.where, err)
	}
	return out, nil
}

func (s *sqlStore) Usage(ctx context.Context, q UsageQuery) ([]UsageRow, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := q.validate(); err != nil {
		return nil, err
	}
	col := map[By]string{ByShare: "share", ByUser: "user_name", ByPartition: "part"}[q.By]
	byKey := map[string]*UsageRow{}
	// Whole hours come from the hourly sums, the parts of an hour at either
	// end from the jobs themselves.
	start, end := ms(q.Start), ms(q.End)
	hs, he := floorHour(start), floorHour(end)
	if hs < start {
		hs += hourMS
	}
	type span struct {
		table      string
		col        string
		jobs       string
		start, end int64
	}
	var spans []span
	rawJobs := `SUM(CASE WHEN array_indices = '' THEN 1 ELSE 0 END)`
	if hs < he {
		spans = append(spans, span{"jobs", "end_ms", rawJobs, start, hs}, span{"usage_hourly", "hour_ms", "SUM(jobs)", hs, he},
			span{"jobs", "end_ms", rawJobs, he, end})
	} else {
		spans = append(spans, span{"jobs", "end_ms", rawJobs, start, end})
	}
	for _, sp := range spans {
		if sp.start >= sp.end {
			continue
		}
		query := `SELECT ` + col + `, ` + sp.jobs + `, SUM(owned_gs), SUM(borrowed_gs), SUM(lost_gs), SUM(grace_gs),
			SUM(preemptions), SUM(sampled_gs), SUM(idle_gs), SUM(util_gs) FROM ` + sp.table + ` WHERE ` + sp.col + ` >= ? AND ` + sp.col + ` < ?`
		args := []any{sp.start, sp.end}
		if q.User != "" {
			query += ` AND user_name = ?`
			args = append(args, q.User)
		}
		query += ` GROUP BY ` + col
		if err := s.sumUsage(ctx, query, args, byKey); err != nil {
			return nil, err
		}
	}
	if q.By != ByUser {
		if err := s.sampleUsage(ctx, q, byKey); err != nil {
			return nil, err
		}
	}
	out := make([]UsageRow, 0, len(byKey))
	for _, r := range byKey {
		if r.Quota > 0 {
			r.Utilization = r.InUse / r.Quota
		}
		if r.Sampled > 0 {
			r.Efficiency = min(r.util/r.Sampled, 1)
		}
		out = append(out, *r)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Key < out[k].Key })
	return out, nil
}

// sampleUsage adds lent, quota (or capacity) and in-use GPU-hours from the
// samples to share or partition rows.
// sumUsage adds the rows of a usage query to byKey.
func (s *sqlStore) sumUsage(ctx context.Context, query string, args []any, byKey map[string]*UsageRow) error {
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return fmt.Errorf("history %s: usage: %w", s.where, err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var jobs, pre int64
		var owned, borrowed, lost, grace, sampled, idle, util float64
		if err := rows.Scan(&key, &jobs, &owned, &borrowed, &lost, &grace, &pre, &sampled, &idle, &util); err != nil {
			return fmt.Errorf("history %s: usage: %w", s.where, err)
		}
		r := byKey[key]
		if r == nil {
			r = &UsageRow{Key: key}
			byKey[key] = r
		}
		r.Jobs += int(jobs)
		r.Preemptions += int(pre)
		r.Owned += owned / 3600
		r.Borrowed += borrowed / 3600
		r.Lost += lost / 3600
		r.Grace += grace / 3600
		r.Sampled += sampled / 3600
		r.Idle += idle / 3600
		r.util += util / 3600
	}
	return rows.Err()
}

func (s *sqlStore) sampleUsage(ctx context.Context, q UsageQuery, byKey map[string]*UsageRow) error {
	var query string
	if q.By == ByShare {
		query = `SELECT share, SUM(lent * seconds), SUM(quota * seconds), SUM(in_use * seconds)
			FROM samples WHERE t_ms >= ? AND t_ms < ? GROUP BY share`
	} else {
		// A partition's capacity is counted once per sampling time.
		query = `SELECT part, SUM(lent_s), SUM(cap_s), SUM(use_s) FROM (
			SELECT part, t_ms, SUM(lent * seconds) AS lent_s, MAX(part_gpus * seconds) AS cap_s, SUM(in_use * seconds) AS use_s
			FROM samples WHERE t_ms >= ? AND t_ms < ? GROUP BY part, t_ms) per_time GROUP BY part`
	}
	rows, err := s.db.QueryContext(ctx, s.q(query), ms(q.Start), ms(q.End))
	if err != nil {
		return fmt.Errorf("history %s: usage samples: %w", s.where, err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var lent, quota, use float64
		if err := rows.Scan(&key, &lent, &quota, &use); err != nil {
			return fmt.Errorf("history %s: usage samples: %w", s.where, err)
		}
		r := byKey[key]
		if r == nil {
			r = &UsageRow{Key: key}
			byKey[key] = r
		}
		r.Lent, r.Quota, r.InUse = lent/3600, quota/3600, use/3600
	}
	return rows.Err()
}

func (s *sqlStore) Samples(ctx context.Context, start, end time.Time, limit int) ([]ShareSample, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxLimit {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT t_ms, share, part, seconds, part_gpus, quota, in_use, borrowed, lent
		FROM samples WHERE t_ms >= ? AND t_ms < ? ORDER BY t_ms, share LIMIT `+strconv.Itoa(limit)), ms(start), ms(end))
	if err != nil {
		return nil, fmt.Errorf("history %s: samples: %w", s.where, err)
	}
	defer rows.Close()
	var out []ShareSample
	for rows.Next() {
		var x ShareSample
		var t int64
		if err := rows.Scan(&t, &x.Share, &x.Partition, &x.Seconds, &x.PartitionGPUs, &x.Quota, &x.InUse, &x.Borrowed, &x.Lent); err != nil {
			return nil, fmt.Errorf("history %s: samples: %w", s.where, err)
		}
		x.Time = fromMS(t)
		out = append(out, x)
	}
	return out, rows.Err()
}

func (s *sqlStore) Purge(ctx context.Context, before time.Time) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("history %s: purge: %w", s.where, err)
	}
	defer tx.Rollback()
	// Whole hours only, so that the hourly sums stay those of the jobs kept.
	cut := floorHour(ms(before))
	res, err := tx.ExecContext(ctx, s.q(`DELETE FROM jobs WHERE end_ms < ?`), cut)
	if err != nil {
		return 0, fmt.Errorf("history %s: purge: %w", s.where, err)
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM usage_hourly WHERE hour_ms < ?`), cut); err != nil {
		return 0, fmt.Errorf("history %s: purge hourly sums: %w", s.where, err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM samples WHERE t_ms < ?`), cut); err != nil {
		return 0, fmt.Errorf("history %s: purge samples: %w", s.where, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("history %s: purge: %w", s.where, err)
	}
	return n, nil
}

func (s *sqlStore) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.db.Close()
}
