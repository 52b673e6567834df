package api

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The one resolution of a job's output paths (qsub -o, -e, -j) into the
// files its nodes write. qsub only makes what the user typed absolute
// against its own directory (it alone sees the user's file system, to tell
// a directory); everything else is here, used by the controller at submit
// and when an array's subjob starts.

// OutputPaths resolves a job's stdout and stderr: an empty path is the
// default name in the work directory (NAME.oSEQ, NAME.eSEQ, as PBS names
// them), a path ending in "/" a directory for that default name; join "oe"
// sends stderr to the stdout file, "eo" the reverse.
func OutputPaths(stdout, stderr, join, workdir, name string, seq uint64) (string, string) {
	stdout = outputPath(stdout, workdir, fmt.Sprintf("%s.o%d", name, seq))
	stderr = outputPath(stderr, workdir, fmt.Sprintf("%s.e%d", name, seq))
	switch join {
	case "oe":
		stderr = stdout
	case "eo":
		stdout = stderr
	}
	return stdout, stderr
}

func outputPath(p, workdir, def string) string {
	switch {
	case p == "":
		return filepath.Join(workdir, def)
	case strings.HasSuffix(p, "/"):
		return filepath.Join(p, def)
	}
	return p
}

// ArrayIndexPlaceholder in a -o or -e path is PBS's stand-in for the
// subjob's index.
const ArrayIndexPlaceholder = "^array_index^"

// SubjobOutputPaths gives subjob i of an array whose output paths are
// stdout and stderr its own files (one file when they are one): the index
// replaces ^array_index^ where the path has it (out.^array_index^.log ->
// out.7.log), else it is appended (NAME.o12 -> NAME.o12.7). /dev/null
// stays /dev/null: every subjob discards its output there.
func SubjobOutputPaths(stdout, stderr string, i int) (string, string) {
	out := subjobPath(stdout, i)
	if stderr == stdout {
		return out, out
	}
	return out, subjobPath(stderr, i)
}

func subjobPath(p string, i int) string {
	if p == os.DevNull {
		return p
	}
	if strings.Contains(p, ArrayIndexPlaceholder) {
		return strings.ReplaceAll(p, ArrayIndexPlaceholder, strconv.Itoa(i))
	}
	return fmt.Sprintf("%s.%d", p, i)
}
