package ctld

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/spool"
)

const maxPriority = 9999

// maxSubmitRecord bounds a new job's spool record (the script and the
// environment travel inside it), leaving room below spool.MaxRecordSize for
// what the job gathers later: its history (at most 200 entries) and
// allocations.
const maxSubmitRecord = spool.MaxRecordSize - 128<<10

// checkRecordSize refuses a job whose record would not fit the spool. It
// encodes only a job whose record could come near the limit: the flush
// encodes the record anyway, and the bytes of an encode here would not be
// those it stores (the scheduling pass sets the new job's pending reason
// first).
func checkRecordSize(j *job) *api.Error {
	// The request id is checked plain ASCII: it encodes as itself.
	if n, ok := recordBound(&j.Job); ok && n+len(`,"request":""`)+len(j.request) <= maxSubmitRecord {
		return nil
	}
	rec, err := j.record()
	if err != nil {
		return badRequest(fmt.Sprintf("job %s: %v", j.ID, err))
	}
	if n := len(rec.Data); n > maxSubmitRecord {
		return badRequest(fmt.Sprintf("job is %d KiB with its script and environment; at most %d KiB: put the work in a file the script runs",
			n>>10, maxSubmitRecord>>10))
	}
	return nil
}

// submit validates and queues a new job on the loop. It returns the job id.
func (c *Controller) submit(id Identity, spec *api.SubmitSpec) (string, *api.Error) {
	if spec == nil {
		return "", badRequest("submit: no job")
	}
	if err := checkRequestID(spec.RequestID); err != nil {
		return "", badRequest("submit: " + err.Error())
	}
	if jid, ok := c.repeatedSubmit(id, spec); ok {
		return jid, nil
	}
	j := &job{Job: fromSpec(&spec.Job)}
	j.Priority = -1 // the share's default, filled by checkSubmit
	if spec.Priority != nil {
		if *spec.Priority < 0 || *spec.Priority > maxPriority {
			return "", badRequest(fmt.Sprintf("priority %d is outside 0..%d", *spec.Priority, maxPriority))
		}
		j.Priority = *spec.Priority
	}
	if spec.PBSPriority != nil && spec.Priority != nil {
		return "", badRequest("submit: priority given on both scales")
	}
	if e := c.checkSubmit(id, j, spec.PBSPriority); e != nil {
		return "", e
	}
	if e := c.checkUserBytes(id.UID, id.User, &j.Job); e != nil {
		return "", e
	}
	if e := c.checkCanRun(j); e != nil {
		return "", e
	}
	if e := c.checkQueued(id.UID, id.User, &j.Job); e != nil {
		return "", e
	}
	seq, err := c.allocSeq()
	if err != nil {
		return "", &api.Error{Code: api.CodeInternal, Message: "allocate job id: " + err.Error()}
	}
	cl := c.cfg.Cluster.Name
	now := c.now()
	j.Seq = seq
	j.ID = jobID(seq, cl)
	if !j.ArrayIndices.IsZero() {
		j.ID = arrayID(seq, cl)
	}
	j.Owner = api.Owner{User: id.User, UID: id.UID, GID: id.GID, Groups: id.Groups}
	j.request = spec.RequestID
	j.SubmitTime = now
	j.State = api.StateQueued
	j.Stdout, j.Stderr = api.OutputPaths(j.Stdout, j.Stderr, j.Join, j.WorkDir, j.Name, seq)
	if j.Env == nil {
		j.Env = map[string]string{}
	}
	j.Env["PBS_O_QUEUE"] = j.Share
	for i := range j.Deps {
		j.Deps[i].On = c.normalizeID(j.Deps[i].On)
	}
	if e := checkRecordSize(j); e != nil {
		return "", e
	}
	sj, err := j.schedJob(cl)
	if err != nil {
		return "", badRequest(err.Error())
	}
	if err := c.core.Apply(sched.Submitted{Job: sj}); err != nil {
		return "", coreError(j.ID, err)
	}
	if j.Hold != "" {
		j.State = api.StateHeld
	}
	j.history(now, "submitted to "+j.Share)
	c.jobs[j.ID] = j
	if j.request != "" {
		c.requestIDs.add(requestKey{uid: id.UID, id: spec.RequestID}, j.ID, now, now)
	}
	c.charge(j)
	c.markDirty(j.ID)
	c.needPass = true
	c.met.submitted.Inc()
	return j.ID, nil
}

// fromSpec makes a job record from what the user sent: field by field, the
// user's fields only; everything else is the controller's to fill.
func fromSpec(s *api.JobSpec) api.Job {
	return api.Job{
		Name: s.Name, Share: s.Share,
		Script: s.Script, Shell: s.Shell, Command: slices.Clone(s.Command), WorkDir: s.WorkDir, Env: maps.Clone(s.Env),
		Stdout: s.Stdout, Stderr: s.Stderr, Image: s.Image, Grace: s.Grace, Join: s.Join, Umask: s.Umask,
		Resources: s.Resources, Hold: s.Hold, NotBefore: s.NotBefore, Deps: slices.Clone(s.Deps),
		ArrayIndices: s.ArrayIndices, ArrayMax: s.ArrayMax, Interactive: s.Interactive,
	}
}

// checkSubmit enforces the rules a user must follow; errors say what to fix.
//
// Long: a flat list of independent checks, in the order a user meets them,
// each a few lines; nothing is carried from one to the next but j.
func (c *Controller) checkSubmit(id Identity, j *job, pbsPrio *int) *api.Error {
	if id.UID == 0 {
		return &api.Error{Code: api.CodePermission, Message: "jobs are not run as root: submit as a regular user"}
	}
	if e := c.resolveShare(id, j); e != nil {
		return e
	}
	sh := c.cfg.Share(j.Share)
	if sh == nil {
		return badRequest(fmt.Sprintf("unknown queue %q; shares: %s", j.Share, strings.Join(c.shareNames(), ", ")))
	}
	if !sh.Enabled {
		return &api.Error{Code: api.CodeInvalidState, Message: fmt.Sprintf("queue %q is disabled: it takes no new jobs", j.Share)}
	}
	if !c.auth.isAdmin(id) && !c.auth.shares[sh.Name].admits(id) {
		return &api.Error{Code: api.CodePermission, Message: fmt.Sprintf("user %s may not submit to queue %q", id.User, j.Share)}
	}
	p := c.cfg.Partition(sh.Partition)
	j.Partition = p.Name
	if pbsPrio != nil {
		if err := checkPBSPriority(*pbsPrio); err != nil {
			return badRequest(err.Error())
		}
		j.PBSPriority = *pbsPrio
	}
	if j.Priority < 0 {
		j.Priority = sh.PriorityDefault
	}
	if j.Priority > maxPriority || j.Priority < 0 {
		return badRequest(fmt.Sprintf("priority %d is outside 0..%d", j.Priority, maxPriority))
	}
	if j.Priority > sh.PriorityDefault && !c.auth.isAdmin(id) {
		return &api.Error{Code: api.CodePermission, Message: aboveDefault(j.Priority, sh)}
	}
	r := &j.Resources
	if r.Nodes == 0 {
		r.Nodes = 1
	}
	if r.Nodes < 0 || r.GPUsPerNode < 0 || r.CPUsPerNode < 0 || r.MemPerNode < 0 {
		return badRequest("resources must not be negative")
	}
	if e := c.checkSiteResources(p.Name, r); e != nil {
		return e
	}
	if e := c.checkTopology(p.Name, r); e != nil {
		return e
	}
	submitDefaults(p, r)
	if e := checkInteractive(p, &j.Job); e != nil {
		return e
	}
	if r.Walltime < 0 || (p.MaxWalltime > 0 && r.Walltime > p.MaxWalltime) {
		return badRequest(fmt.Sprintf("walltime %v exceeds partition %s's max_walltime %v", r.Walltime, p.Name, p.MaxWalltime))
	}
	if j.Shell != "" && (!filepath.IsAbs(j.Shell) || len(j.Shell) > 4096 || strings.ContainsAny(j.Shell, "\x00\n")) {
		return badRequest(fmt.Sprintf("shell %q is not an absolute path", j.Shell))
	}
	if j.Script == "" && len(j.Command) == 0 && !j.Interactive {
		return badRequest("nothing to run: give a script or -- command")
	}
	if j.Image == conf.HostImage && !p.HostImage {
		return badRequest(fmt.Sprintf("image %q (the node's own root filesystem) is not allowed in partition %s (host_image = true allows it)", conf.HostImage, p.Name))
	}
	if !filepath.IsAbs(j.WorkDir) {
		return badRequest(fmt.Sprintf("working directory %q is not absolute", j.WorkDir))
	}
	for _, path := range []string{j.Stdout, j.Stderr} {
		if path != "" && !filepath.IsAbs(path) {
			return badRequest(fmt.Sprintf("output path %q is not absolute", path))
		}
	}
	if j.Name == "" {
		j.Name = "STDIN"
	}
	if err := checkSpecStrings(&j.Job, c.auth.isAdmin(id)); err != nil {
		return badRequest(err.Error())
	}
	if j.Join != "" && j.Join != "oe" && j.Join != "eo" && j.Join != "n" {
		return badRequest(fmt.Sprintf("join %q: want oe, eo or n", j.Join))
	}
	if j.Grace < 0 {
		return badRequest("grace must not be negative")
	}
	if _, err := api.ParseUmask(j.Umask); err != nil {
		return badRequest(err.Error())
	}
	if p.MaxPreemptGrace > 0 && j.Grace > p.MaxPreemptGrace {
		return badRequest(fmt.Sprintf("grace %v is above partition %s's max_preempt_grace %v", j.Grace, p.Name, p.MaxPreemptGrace))
	}
	if !j.ArrayIndices.IsZero() {
		if _, err := j.ArrayIndices.MarshalText(); err != nil { // decoded, it is checked; made in-process, here
			return badRequest(err.Error())
		}
		if j.ArrayMax < 0 {
			return badRequest("array %max must be positive")
		}
	}
	for _, d := range j.Deps {
		if err := d.Type.Check(); err != nil {
			return badRequest(err.Error())
		}
		on := c.normalizeID(d.On)
		if _, ok := c.jobs[on]; !ok {
			return &api.Error{Code: api.CodeUnknownJob, Message: fmt.Sprintf("dependency on unknown job %s", d.On), ID: d.On}
		}
	}
	return nil
}

// checkSiteResources checks -l mpiprocs, ompthreads and the node labels a
// job selects: each label must be one the partition's nodes carry, with a
// value one of them has.
func (c *Controller) checkSiteResources(part string, r *api.Resources) *api.Error {
	if r.MPIProcs < 0 || r.MPIProcs > 4096 || r.OMPThreads < 0 || r.OMPThreads > 4096 {
		return badRequest("mpiprocs and ompthreads must be 1 to 4096")
	}
	if len(r.Labels) > conf.MaxLabels {
		return badRequest(fmt.Sprintf("%d node labels; at most %d", len(r.Labels), conf.MaxLabels))
	}
	if len(r.Labels) == 0 {
		return nil
	}
	have := c.cfg.PartitionLabels(part)
	names := make([]string, 0, len(have))
	for k := range have {
		names = append(names, k)
	}
	sort.Strings(names)
	keys := make([]string, 0, len(r.Labels))
	for k := range r.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := r.Labels[k]
		vals, ok := have[k]
		switch {
		case !ok:
			known := "none"
			if len(names) > 0 {
				known = strings.Join(names, ", ")
			}
			return badRequest(fmt.Sprintf("unknown resource %q: not a resource sharq knows (ngpus, ncpus, mem, walltime, mpiprocs, ompthreads, place) nor a label of partition %s's nodes (labels: %s)", k, part, known))
		case !slices.Contains(vals, v):
			return badRequest(fmt.Sprintf("no node of partition %s has %s=%s (its nodes have %s)", part, k, v, strings.Join(vals, ", ")))
		}
	}
	return nil
}

// allocSeq hands out the next job number. A controller that starts to
// lead (or rebuilds) first reserves one number in the spool, which is
// above every job number ever stored or reserved; the numbers after it need
// no reservation: every Put raises the spool's counter above the jobs it
// stores, in the same transaction (spool.Spool), so the high-water mark is
// persisted with the jobs themselves. A number given to a job that never
// became durable (the controller died, or was deposed, before its write)
// may be given again to another job; nobody was told of the first. Job
// numbers therefore go on from the last stored one at a leader change (a
// failed start's reservation aside), with no block skipped.
func (c *Controller) allocSeq() (uint64, error) {
	if c.nextSeq >= c.seqLimit {
		first, err := c.sp.NextIDs(bgctx, 1)
		if err != nil {
			return 0, err
		}
		c.nextSeq, c.seqLimit = max(first, c.nextSeq), math.MaxUint64
	}
	s := c.nextSeq
	c.nextSeq++
	return s, nil
}

// resolveShare turns qsub -q into a share name: SHARE@SERVER is SHARE
// when SERVER is this cluster (its name, or the controller's host name), and
// no -q (or -q @SERVER) is the cluster's default_share. Without one, the
// error names the shares id may use.
func (c *Controller) resolveShare(id Identity, j *job) *api.Error {
	name, server, hasServer := strings.Cut(j.Share, "@")
	if hasServer && !c.isThisServer(server) {
		return badRequest(fmt.Sprintf("queue %q is on server %q, not on this cluster (%s)", j.Share, server, c.cfg.Cluster.Name))
	}
	if name == "" {
		name = c.cfg.Cluster.DefaultShare
	}
	if name == "" {
		var mine []string
		for _, s := range c.cfg.Shares {
			if s.Enabled && (c.auth.isAdmin(id) || c.auth.shares[s.Name].admits(id)) {
				mine = append(mine, s.Name)
			}
		}
		switch len(mine) {
		case 0:
			return &api.Error{Code: api.CodePermission, Message: fmt.Sprintf("no queue given (-q SHARE), the cluster has no default_share, and user %s may submit to no share", id.User)}
		case 1:
			return badRequest(fmt.Sprintf("no queue given and the cluster has no default_share: use -q %s", mine[0]))
		}
		return badRequest("no queue given and the cluster has no default_share: use -q SHARE, one of " + strings.Join(mine, ", "))
	}
	j.Share = name
	return nil
}

// isThisServer tells whether a PBS server name (qsub -q SHARE@SERVER) is
// this cluster: its name, or the controller host's name, short or full.
func (c *Controller) isThisServer(server string) bool {
	if server == "" || server == c.cfg.Cluster.Name {
		return true
	}
	host, err := os.Hostname()
	if err != nil {
		return false
	}
	short, _, _ := strings.Cut(host, ".")
	return strings.EqualFold(server, host) || strings.EqualFold(server, short)
}

func (c *Controller) shareNames() []string {
	var out []string
	for _, s := range c.cfg.Shares {
		out = append(out, s.Name)
	}
	return out
}

func badRequest(msg string) *api.Error { return &api.Error{Code: api.CodeBadRequest, Message: msg} }

// coreError maps the core's errors to API errors.
func coreError(id string, err error) *api.Error {
	code := api.CodeBadRequest
	switch {
	case errors.Is(err, sched.ErrUnknownJob):
		code = api.CodeUnknownJob
	case errors.Is(err, sched.ErrInvalid):
		code = api.CodeInvalidState
	}
	return &api.Error{Code: code, Message: err.Error(), ID: id}
}
