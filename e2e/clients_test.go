//go:build !unit

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClientConformance replays, for each PBS client that submits work
// for people (Nextflow, Parsl, JupyterHub batchspawner, Cromwell,
// dask-jobqueue, Snakemake), that client's own command lines (submit,
// poll, delete) against real daemons and containers, and reads sharq's
// answers with the client's own parsing rules, each quoted with the
// client's version and source file. Every client sees one job through
// its whole life: queued (held at submission through the client's own
// place for extra qsub options, then released), running, finished OK;
// one that fails (exit 3); one deleted while it runs.
//
// The jobs run the node's own root filesystem (the partition's default
// image is "host"), as the clients' bash scripts need bash.
func TestClientConformance(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares, part: "host_image = true", image: "host"})
	for _, cl := range []struct {
		name string
		run  func(*clientRun)
	}{
		{"Nextflow", replayNextflow},
		{"Parsl", replayParsl},
		{"batchspawner", replayBatchspawner},
		{"Cromwell", replayCromwell},
		{"dask-jobqueue", replayDask},
		{"Snakemake", replaySnakemake},
	} {
		t.Run(cl.name, func(t *testing.T) {
			cc := *c
			cc.t = t // the cluster's helpers fail this subtest
			cl.run(&clientRun{c: &cc, t: t, dir: cc.userDir(cl.name)})
		})
	}
}

// clientRun is one client's replay: its own directory in alice's.
type clientRun struct {
	c   *cluster
	t   *testing.T
	dir string
}

// userDir makes a directory of alice's under her submit directory.
func (c *cluster) userDir(name string) string {
	c.t.Helper()
	p := filepath.Join(c.workdir, name)
	must(c.t, os.MkdirAll(p, 0o755))
	for d := p; d != c.workdir; d = filepath.Dir(d) {
		must(c.t, os.Chown(d, alice, alice))
	}
	return p
}

// file writes one of alice's files under the replay's directory.
func (r *clientRun) file(name, body string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	must(r.t, os.WriteFile(p, []byte(body), 0o755))
	must(r.t, os.Chown(p, alice, alice))
	return p
}

// sh runs a command line through bash as alice in dir, as the clients'
// subprocess calls do, with the cluster's commands on PATH; it returns
// stdout, stderr and the exit status.
func (r *clientRun) sh(dir, line string) (string, string, int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Env = []string{"PATH=" + binDir + ":/usr/bin:/bin", "HOME=" + r.c.workdir, "LANG=C", "SHARQ_SOCKET=" + r.c.sock}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: alice, Gid: alice}}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return o.String(), e.String(), ee.ExitCode()
	case err != nil:
		r.t.Fatalf("%s: %v", line, err)
	}
	return o.String(), e.String(), 0
}

// ok runs a command line that must succeed and returns its stdout.
func (r *clientRun) ok(dir, line string) string {
	r.t.Helper()
	out, errOut, code := r.sh(dir, line)
	if code != 0 {
		r.t.Fatalf("%s: exit %d\n%s%s", line, code, out, errOut)
	}
	return out
}

// until polls a client's view of a job until it is want.
func (r *clientRun) until(what, want string, view func() string) {
	r.t.Helper()
	r.c.eventually(time.Minute, func() (bool, string) {
		got := view()
		return got == want, fmt.Sprintf("%s: %q, want %q", what, got, want)
	})
}

// The three bodies every client's jobs run: one waits for its go file
// in dir, the directory it was submitted from (so that the test sees it
// running), one fails, one runs until deleted.
func waitBody(dir, tag string) string {
	return fmt.Sprintf("while [ ! -e %s ]; do sleep 0.1; done\n", filepath.Join(dir, tag+".go"))
}

const (
	failBody = "exit 3\n"
	longBody = "sleep 600\n"
)

// release is the test's own step: qrls of the job held at submission.
func (r *clientRun) release(id string) {
	r.t.Helper()
	r.ok(r.dir, "qrls "+id)
}

// goAhead lets the job of waitBody(dir, tag) finish.
func (r *clientRun) goAhead(dir, tag string) {
	r.t.Helper()
	p := filepath.Join(dir, tag+".go")
	must(r.t, os.WriteFile(p, nil, 0o644))
}

// replayNextflow: Nextflow 24.x, PbsProExecutor (PBS Pro).
func replayNextflow(r *clientRun) {
	// modules/nextflow/src/main/groovy/nextflow/executor/PbsProExecutor.groovy,
	// getDirectives: clusterOptions first, then -N, -o .command.log, -j oe,
	// -q, -l select=1:ncpus=N:mem=Mmb, -l walltime=HH:mm:ss; PbsExecutor
	// getHeaders adds NXF_CHDIR. The wrapper writes .exitcode on exit.
	taskDir := func(name string) string { return r.c.userDir(filepath.Join(filepath.Base(r.dir), "work", name)) }
	submit := func(name, clusterOptions, body string) (id, dir string) {
		dir = taskDir(name)
		var h strings.Builder
		h.WriteString("#!/bin/bash\n")
		if clusterOptions != "" {
			h.WriteString("#PBS " + clusterOptions + "\n")
		}
		fmt.Fprintf(&h, "#PBS -N nf-%s\n#PBS -o %s/.command.log\n#PBS -j oe\n#PBS -q b\n#PBS -l select=1:ncpus=1:mem=1024mb\n#PBS -l walltime=00:10:00\nNXF_CHDIR=%s\n", name, dir, dir)
		// The wrapper's on_exit and on_term, and its task run in the
		// background, as .command.run (command-run.txt) has them.
		fmt.Fprintf(&h, "on_exit() { exit_status=${nxf_main_ret:=$?}; printf -- $exit_status > %s/.exitcode; }\n"+
			"on_term() { [[ \"$pid\" ]] && kill $pid; }\ntrap on_exit EXIT\ntrap on_term TERM INT USR2\n"+
			"cd $NXF_CHDIR\n(\n%s) &\npid=$!\nwait $pid\nnxf_main_ret=$?\n", dir, body)
		p := filepath.Join(dir, ".command.run")
		must(r.t, os.WriteFile(p, []byte(h.String()), 0o755))
		must(r.t, os.Chown(p, alice, alice))
		// PbsExecutor.getSubmitCommandLine: qsub -N NAME .command.run, in
		// the task's directory; parseJobId: the trimmed output, one line.
		out := strings.TrimSpace(r.ok(dir, "qsub -N nf-"+name+" .command.run"))
		if out == "" || strings.Contains(out, "\n") {
			r.t.Fatalf("Nextflow: invalid PBS/Torque submit response %q", out)
		}
		return out, dir
	}
	// PbsProExecutor.queueStatusCommand(queue): bash -c "set -o pipefail;
	// qstat -f QUEUE | { grep -E '(Job Id:|job_state =)' || true; }";
	// PbsExecutor.parseQueueStatus: "Job Id:" starts a job, every later
	// line's text after "job_state =" is its status, decoded by
	// PbsProExecutor.DECODE_STATUS (F DONE, E and R RUNNING, Q PENDING,
	// H S U W T M HOLD; anything else UNKNOWN).
	decode := map[string]string{"F": "DONE", "E": "RUNNING", "R": "RUNNING", "Q": "PENDING",
		"H": "HOLD", "S": "HOLD", "U": "HOLD", "W": "HOLD", "T": "HOLD", "M": "HOLD"}
	status := func() map[string]string {
		out := r.ok(r.dir, `set -o pipefail; qstat -f b | { grep -E '(Job Id:|job_state =)' || true; }`)
		res := map[string]string{}
		id, st := "", ""
		fetch := func(prefix, line string) string {
			if p := strings.Index(line, prefix); p >= 0 {
				return strings.TrimSpace(line[p+len(prefix):])
			}
			return ""
		}
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if strings.HasPrefix(line, "Job Id:") {
				id = fetch("Job Id:", line)
			} else if id != "" {
				st = fetch("job_state =", line)
			}
			if id != "" {
				if d, ok := decode[st]; ok {
					res[id] = d
				} else {
					res[id] = "UNKNOWN"
				}
			}
		}
		return res
	}
	// GridTaskHandler: a job the queue no longer lists (or lists DONE) has
	// completed; its exit status is the .exitcode file's number.
	view := func(id, dir string) string {
		if st, ok := status()[id]; ok && st != "DONE" {
			return st
		}
		b, err := os.ReadFile(filepath.Join(dir, ".exitcode"))
		if err != nil {
			return "gone, no .exitcode"
		}
		return "exit " + strings.TrimSpace(string(b))
	}
	okID, okDir := submit("ok", "-h", waitBody(taskDir("ok"), "ok"))
	r.until("Nextflow "+okID, "HOLD", func() string { return view(okID, okDir) })
	r.release(okID)
	r.until("Nextflow "+okID, "RUNNING", func() string { return view(okID, okDir) })
	r.goAhead(okDir, "ok")
	r.until("Nextflow "+okID, "exit 0", func() string { return view(okID, okDir) })

	badID, badDir := submit("bad", "", failBody)
	r.until("Nextflow "+badID, "exit 3", func() string { return view(badID, badDir) })

	delID, delDir := submit("del", "", longBody)
	r.until("Nextflow "+delID, "RUNNING", func() string { return view(delID, delDir) })
	// getKillCommand: qdel ID.
	r.ok(delDir, "qdel "+delID)
	r.c.eventually(time.Minute, func() (bool, string) {
		v := view(delID, delDir)
		return v != "RUNNING" && v != "exit 0", v
	})
}

// replayParsl: Parsl 2024.x, PBSProProvider.
func replayParsl(r *clientRun) {
	ids := map[string]string{} // job id -> its resources' status
	var order []string
	// parsl/providers/pbspro/template.py's template_string, with
	// scheduler_options on its own line; pbspro.py submit: launch_cmd =
	// "qsub {0} {1}".format(submit_options, channel_script_path), with
	// submit_options " -q QUEUE"; the job id is the last non-blank line of
	// stdout, stripped.
	submit := func(name, schedulerOptions, body string) string {
		jobname := "parsl." + name
		p := r.file(jobname+".submit", fmt.Sprintf(`#!/bin/bash

#PBS -S /bin/bash
#PBS -N %s
#PBS -m n
#PBS -l walltime=00:10:00
#PBS -l select=1:ncpus=1
#PBS -o %s/%s.submit.stdout
#PBS -e %s/%s.submit.stderr
%s

export JOBNAME="%s"

%s
`, jobname, r.dir, jobname, r.dir, jobname, schedulerOptions, jobname, body))
		out := r.ok(r.dir, "qsub  -q b "+p)
		id := ""
		for _, line := range strings.Split(out, "\n") {
			if strings.TrimSpace(line) != "" {
				id = strings.TrimSpace(line)
			}
		}
		ids[id] = "PENDING"
		order = append(order, id)
		return id
	}
	// pbspro.py _status: qstat -f -F json ID..., json.loads(stdout) (its
	// exit status unread), then for each of doc["Jobs"]: the provider's id
	// that startswith it, translate_table[job["job_state"]] (torque.py: B
	// R RUNNING, C E COMPLETED, H S HELD, Q W PENDING, else UNKNOWN); a job
	// of the provider's not in Jobs is COMPLETED.
	translate := map[string]string{"B": "RUNNING", "R": "RUNNING", "C": "COMPLETED", "E": "COMPLETED",
		"H": "HELD", "Q": "PENDING", "W": "PENDING", "S": "HELD"}
	poll := func() {
		out, errOut, _ := r.sh(r.dir, "qstat -f -F json "+strings.Join(order, " "))
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			r.t.Fatalf("Parsl: json.loads of qstat -f -F json: %v\nstdout %q\nstderr %q", err, out, errOut)
		}
		missing := map[string]bool{}
		for _, id := range order {
			missing[id] = true
		}
		if raw, ok := doc["Jobs"]; ok {
			var jobs map[string]map[string]any
			if err := json.Unmarshal(raw, &jobs); err != nil {
				r.t.Fatalf("Parsl: Jobs: %v\n%s", err, out)
			}
			for jid, job := range jobs {
				for _, long := range order {
					if strings.HasPrefix(long, jid) {
						jid = long
						break
					}
				}
				st, _ := job["job_state"].(string)
				if s, ok := translate[st]; ok {
					ids[jid] = s
				} else {
					ids[jid] = "UNKNOWN"
				}
				delete(missing, jid)
			}
		}
		for id := range missing {
			ids[id] = "COMPLETED"
		}
	}
	view := func(id string) func() string { return func() string { poll(); return ids[id] } }

	okID := submit("ok", "#PBS -h", waitBody(r.dir, "parsl-ok"))
	r.until("Parsl "+okID, "HELD", view(okID))
	r.release(okID)
	r.until("Parsl "+okID, "RUNNING", view(okID))
	r.goAhead(r.dir, "parsl-ok")
	r.until("Parsl "+okID, "COMPLETED", view(okID))
	// Parsl learns of failures from its own workers, not from PBS: a failed
	// block is COMPLETED to the provider.
	badID := submit("bad", "", failBody)
	r.until("Parsl "+badID, "COMPLETED", view(badID))
	delID := submit("del", "", longBody)
	r.until("Parsl "+delID, "RUNNING", view(delID))
	// torque.py cancel: qdel ID..., exit status 0 means cancelled.
	r.ok(r.dir, "qdel "+delID)
	r.until("Parsl "+delID, "COMPLETED", view(delID))
}

// replayBatchspawner: JupyterHub batchspawner 1.3, PBSSpawner.
func replayBatchspawner(r *clientRun) {
	// batchspawner/batchspawner.py PBSSpawner.batch_script (queue, runtime,
	// nprocs, memory, keepvars and options filled in), given to
	// batch_submit_cmd "qsub" (TorqueSpawner) on standard input; the job
	// id is its stripped output (BatchSpawnerBase.parse_job_id).
	submit := func(options, body string) string {
		script := fmt.Sprintf(`#!/bin/sh
#PBS -q b
#PBS -l walltime=00:10:00
#PBS -l select=1:ncpus=1:mem=1gb
#PBS -N jupyterhub-singleuser
#PBS -o %s/.jupyterhub.pbs.out
#PBS -e %s/.jupyterhub.pbs.err
#PBS -v PATH,LANG
%s

%s
`, r.dir, r.dir, options, body)
		p := r.file("spawn.sh", script)
		return strings.TrimSpace(r.ok(r.dir, "qsub < "+p))
	}
	// batch_query_cmd "qstat -fx {job_id}"; state_pending_re
	// r"job_state = [QH]", state_running_re r"job_state = R",
	// state_exechost_re r"exec_host = ([\w_-]+)/" (the host the hub
	// connects to). poll(): running or pending is alive, anything else
	// (the query's stderr included, when it fails) is stopped.
	pending := regexp.MustCompile(`job_state = [QH]`)
	running := regexp.MustCompile(`job_state = R`)
	exechost := regexp.MustCompile(`exec_host = ([\w_-]+)/`)
	view := func(id string) func() string {
		return func() string {
			out, errOut, code := r.sh(r.dir, "qstat -fx "+id)
			status := out
			if code != 0 {
				status = errOut
			}
			switch {
			case running.MatchString(status):
				m := exechost.FindStringSubmatch(status)
				if m == nil {
					return "running, no exec_host"
				}
				return "running on " + m[1]
			case pending.MatchString(status):
				return "pending"
			}
			return "stopped"
		}
	}
	okID := submit("#PBS -h", waitBody(r.dir, "bs-ok"))
	r.until("batchspawner "+okID, "pending", view(okID))
	r.release(okID)
	r.until("batchspawner "+okID, "running on n1", view(okID))
	r.goAhead(r.dir, "bs-ok")
	r.until("batchspawner "+okID, "stopped", view(okID))
	badID := submit("", failBody)
	r.until("batchspawner "+badID, "stopped", view(badID))
	delID := submit("", longBody)
	r.until("batchspawner "+delID, "running on n1", view(delID))
	// batch_cancel_cmd "qdel {job_id}".
	r.ok(r.dir, "qdel "+delID)
	r.until("batchspawner "+delID, "stopped", view(delID))
}

// replayCromwell: Cromwell's shared-file-system (Config) backend set up
// for PBS as its example cromwell.example.backends/TORQUE.conf
// (broadinstitute/cromwell) is, with the memory a Float runtime attribute
// in GB (-l mem=${memory_gb}gb, so mem=2.0gb) and PBS's -l walltime and -q
// in place of Torque's nodes=1:ppn and -d.
func replayCromwell(r *clientRun) {
	// submit = "qsub -N ${job_name} ... -o ${out} -e ${err} ${script}",
	// run in the call's execution directory; job-id-regex = "(\\d+)" (the
	// first match in stdout); the script Cromwell writes runs the command
	// and writes its status to rc (echo $? > rc.tmp; mv rc.tmp rc).
	idRE := regexp.MustCompile(`(\d+)`)
	execDir := func(name string) string { return r.c.userDir(filepath.Join(filepath.Base(r.dir), name, "execution")) }
	submit := func(name, extra, body string) (id, dir string) {
		dir = execDir(name)
		script := filepath.Join(dir, "script")
		must(r.t, os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/bash\n(\ncd %s\n%s)\necho $? > %s/rc.tmp\nmv %s/rc.tmp %s/rc\n", dir, body, dir, dir, dir)), 0o755))
		must(r.t, os.Chown(script, alice, alice))
		out := r.ok(dir, fmt.Sprintf("qsub %s-N cromwell_%s -o %s/stdout -e %s/stderr -l walltime=1:00:00 -l mem=2.0gb -q b %s", extra, name, dir, dir, script))
		m := idRE.FindStringSubmatch(out)
		if m == nil {
			r.t.Fatalf("Cromwell: no job id in %q", out)
		}
		return m[1], dir
	}
	// check-alive = "qstat ${job_id}": exit status 0 is alive, anything
	// else dead, whereupon Cromwell reads rc.
	view := func(id, dir string) func() string {
		return func() string {
			if _, _, code := r.sh(dir, "qstat "+id); code == 0 {
				return "alive"
			}
			b, err := os.ReadFile(filepath.Join(dir, "rc"))
			if err != nil {
				return "dead, no rc"
			}
			return "rc " + strings.TrimSpace(string(b))
		}
	}
	okID, okDir := submit("ok", "-h ", waitBody(execDir("ok"), "ok"))
	r.until("Cromwell "+okID, "alive", view(okID, okDir))
	r.release(okID)
	r.c.waitState(okID, "R", time.Minute)
	r.until("Cromwell "+okID, "alive", view(okID, okDir))
	r.goAhead(okDir, "ok")
	r.until("Cromwell "+okID, "rc 0", view(okID, okDir))
	// OpenPBS's qstat of a finished job without -x: exit 35.
	if _, errOut, code := r.sh(okDir, "qstat "+okID); code != 35 {
		r.t.Errorf("Cromwell: qstat %s of a finished job: exit %d, want 35 (%s)", okID, code, errOut)
	}
	badID, badDir := submit("bad", "", failBody)
	r.until("Cromwell "+badID, "rc 3", view(badID, badDir))
	delID, delDir := submit("del", "", longBody)
	r.c.waitState(delID, "R", time.Minute)
	// kill = "qdel ${job_id}"; a killed job is dead with no rc (Cromwell
	// then fails the call once exit-code-timeout-seconds pass).
	r.ok(delDir, "qdel "+delID)
	r.until("Cromwell "+delID, "dead, no rc", view(delID, delDir))
}

// replayDask: dask-jobqueue 0.8.x, PBSCluster (PBSJob).
func replayDask(r *clientRun) {
	// dask_jobqueue/pbs.py PBSJob header: #PBS -N dask-worker, -q, -l
	// select=1:ncpus=CORES:mem=pbs_format_bytes_ceil(memory) (1e9 bytes:
	// 954MB), -l walltime, then job_extra_directives; core.py's template
	// starts with #!/usr/bin/env bash. core.py Job._submit_job runs
	// submit_command "qsub" SCRIPT; job_id_regexp r"(?P<job_id>\d+)",
	// re.search over stdout; _close_job runs cancel_command "qdel" JOB_ID.
	// dask does not poll PBS: the cluster's own qstat shows the job's life.
	idRE := regexp.MustCompile(`(?P<job_id>\d+)`)
	submit := func(name, extra, body string) string {
		var h strings.Builder
		h.WriteString("#!/usr/bin/env bash\n\n#PBS -N dask-worker\n#PBS -q b\n#PBS -l select=1:ncpus=1:mem=954MB\n#PBS -l walltime=00:30:00\n")
		if extra != "" {
			h.WriteString("#PBS " + extra + "\n")
		}
		h.WriteString("\n" + body)
		p := r.file("tmp"+name+".sh", h.String())
		out := r.ok(r.dir, "qsub "+p)
		m := idRE.FindStringSubmatch(out)
		if m == nil {
			r.t.Fatalf("dask-jobqueue: no job id in %q", out)
		}
		return m[idRE.SubexpIndex("job_id")]
	}
	okID := submit("ok", "-h", waitBody(r.dir, "dask-ok"))
	r.c.waitState(okID, "H", time.Minute)
	r.release(okID)
	r.c.waitState(okID, "R", time.Minute)
	r.goAhead(r.dir, "dask-ok")
	r.c.waitState(okID, "F", time.Minute)
	if st := r.c.field(okID, "Exit_status"); st != "0" {
		r.t.Errorf("dask-jobqueue %s: Exit_status %q", okID, st)
	}
	badID := submit("bad", "", failBody)
	r.c.waitState(badID, "F", time.Minute)
	if st := r.c.field(badID, "Exit_status"); st != "3" {
		r.t.Errorf("dask-jobqueue %s: Exit_status %q, want 3", badID, st)
	}
	delID := submit("del", "", longBody)
	r.c.waitState(delID, "R", time.Minute)
	r.ok(r.dir, "qdel "+delID) // JobQueueCluster close: qdel JOB_ID
	r.c.waitState(delID, "F", time.Minute)
}

// replaySnakemake: Snakemake 7.21, the generic cluster mode with a
// PBS-style --cluster-status script.
func replaySnakemake(r *clientRun) {
	// A PBS-style status script as the Snakemake profiles for PBS write
	// them: qstat -fx ID; job_state F is success when Exit_status is 0,
	// else failed; a failing qstat is failed; any other state running.
	status := r.file("pbs-status.sh", `#!/bin/bash
out=$(qstat -fx "$1") || { echo failed; exit 0; }
state=$(sed -n 's/^ *job_state = //p' <<<"$out")
if [ "$state" = F ]; then
	[ "$(sed -n 's/^ *Exit_status = //p' <<<"$out")" = 0 ] && echo success || echo failed
else
	echo running
fi
`)
	// snakemake/executors/__init__.py (Debian's 7.21) GenericClusterExecutor:
	// run submits '{submitcmd} "{jobscript}"' (shell=True), the job id the
	// first line of its output; _wait_for_jobs runs "{statuscmd} '{jobid}'",
	// whose output, stripped and split into lines, must be one line, one of
	// running, success, failed (else WorkflowError); cancel runs
	// [cancelcmd] + ids (no shell).
	submit := func(name, cluster, body string) string {
		p := r.file("snakejob."+name+".sh", "#!/bin/sh\n# properties = {\"type\": \"single\", \"rule\": \""+name+"\"}\n"+body)
		out := r.ok(r.dir, fmt.Sprintf("%s %q", cluster, p))
		return strings.Split(out, "\n")[0]
	}
	view := func(id string) func() string {
		return func() string {
			ret := strings.Split(strings.TrimSpace(r.ok(r.dir, fmt.Sprintf("%s '%s'", status, id))), "\n")
			if len(ret) != 1 || (ret[0] != "running" && ret[0] != "success" && ret[0] != "failed") {
				r.t.Fatalf("Snakemake: cluster status command returned %q but just a single line with one of running,success,failed is expected", ret)
			}
			return ret[0]
		}
	}
	okID := submit("ok", "qsub -q a -h", waitBody(r.dir, "smk-ok"))
	r.until("Snakemake "+okID, "running", view(okID))
	if st := r.c.state(okID); st != "H" {
		r.t.Errorf("Snakemake %s: state %q while held", okID, st)
	}
	r.release(okID)
	r.c.waitState(okID, "R", time.Minute)
	r.until("Snakemake "+okID, "running", view(okID))
	r.goAhead(r.dir, "smk-ok")
	r.until("Snakemake "+okID, "success", view(okID))
	badID := submit("bad", "qsub -q a", failBody)
	r.until("Snakemake "+badID, "failed", view(badID))
	delID := submit("del", "qsub -q a", longBody)
	r.c.waitState(delID, "R", time.Minute)
	r.ok(r.dir, "qdel "+delID)
	r.until("Snakemake "+delID, "failed", view(delID))
	if _, errOut, code := r.sh(r.dir, "qstat -fx 999999"); code != 153 {
		r.t.Errorf("qstat -fx of an unknown job: exit %d %s", code, errOut)
	}
}
