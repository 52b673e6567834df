package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// ErrBadVariable is wrapped by every -v parsing error.
var ErrBadVariable = errors.New("bad variable list")

// envName matches a variable name; compiled on first use (-v, -V), not in
// every client command's start.
var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// envVar is one -v entry; Value is nil for a bare name (take qsub's own).
type envVar struct {
	Name  string
	Value *string
}

// parseVariableList parses -v VAR=x,VAR2,VAR3='a,b': commas inside quotes
// belong to the value, and quotes around a value are removed.
func parseVariableList(s string) ([]envVar, error) {
	var (
		out   []envVar
		items []string
		cur   strings.Builder
		quote byte
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote == 0 && c == ',':
			items = append(items, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	if quote != 0 {
		return nil, fmt.Errorf("%w %q: unterminated quote", ErrBadVariable, s)
	}
	items = append(items, cur.String())
	for _, item := range items {
		name, val, hasVal := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if !envName().MatchString(name) {
			return nil, fmt.Errorf("%w %q: %q is not a variable name", ErrBadVariable, s, name)
		}
		v := envVar{Name: name}
		if hasVal {
			if len(val) >= 2 && (val[0] == '\'' || val[0] == '"') && val[len(val)-1] == val[0] {
				val = val[1 : len(val)-1]
			}
			v.Value = &val
		}
		out = append(out, v)
	}
	return out, nil
}

// pbsOVars are the submit-side variables a PBS job sees as PBS_O_NAME.
var pbsOVars = []string{"HOME", "LOGNAME", "PATH", "SHELL", "LANG", "MAIL", "TZ"}

// jobEnv builds a job's environment: with all (-V) qsub's whole
// environment but its PBS_* variables, then the -v variables (a bare name takes qsub's value, or
// the empty string), then the PBS_O_* variables, which nothing overrides.
func jobEnv(environ []string, all bool, vars []envVar, workdir, host string) map[string]string {
	own := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			own[k] = v
		}
	}
	env := map[string]string{}
	if all {
		for k, v := range own {
			// A qsub inside a job has the job's PBS_* (PBS_JOBID,
			// PBS_ARRAY_INDEX, PBS_O_*): they describe that job, not the
			// new one, which gets its own.
			if envName().MatchString(k) && !strings.HasPrefix(k, "PBS_") {
				env[k] = v
			}
		}
	}
	for _, v := range vars {
		if v.Value != nil {
			env[v.Name] = *v.Value
		} else {
			env[v.Name] = own[v.Name]
		}
	}
	for _, name := range pbsOVars {
		if v, ok := own[name]; ok {
			env["PBS_O_"+name] = v
		}
	}
	if _, ok := own["LOGNAME"]; !ok {
		if v, ok := own["USER"]; ok {
			env["PBS_O_LOGNAME"] = v
		}
	}
	env["PBS_O_WORKDIR"] = workdir
	if host != "" {
		env["PBS_O_HOST"] = host
	}
	return env
}
