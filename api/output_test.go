package api

import "testing"

func TestOutputPaths(t *testing.T) {
	tests := []struct {
		name, stdout, stderr, join string
		wantOut, wantErr           string
	}{
		{"default", "", "", "", "/home/a/train.o12", "/home/a/train.e12"},
		{"directory", "/home/a/logs/", "/home/a/err/", "", "/home/a/logs/train.o12", "/home/a/err/train.e12"},
		{"file", "/home/a/x.log", "/home/a/y.log", "", "/home/a/x.log", "/home/a/y.log"},
		{"join oe, default", "", "", "oe", "/home/a/train.o12", "/home/a/train.o12"},
		{"join oe, directory", "/home/a/logs/", "", "oe", "/home/a/logs/train.o12", "/home/a/logs/train.o12"},
		{"join eo", "/home/a/x.log", "/home/a/y.log", "eo", "/home/a/y.log", "/home/a/y.log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := OutputPaths(tt.stdout, tt.stderr, tt.join, "/home/a", "train", 12)
			if out != tt.wantOut || err != tt.wantErr {
				t.Errorf("OutputPaths = %q, %q; want %q, %q", out, err, tt.wantOut, tt.wantErr)
			}
		})
	}
}

func TestSubjobOutputPaths(t *testing.T) {
	tests := []struct {
		name, path string
		index      int
		want       string
	}{
		{"appended", "/home/a/train.o12", 7, "/home/a/train.o12.7"},
		{"placeholder", "/home/a/out.^array_index^.log", 7, "/home/a/out.7.log"},
		{"placeholder twice", "/home/a/^array_index^/o.^array_index^", 0, "/home/a/0/o.0"},
		{"placeholder in a directory", "/home/a/logs/^array_index^/train.o12", 3, "/home/a/logs/3/train.o12"},
		// Once /dev/null.7, which a job cannot create.
		{"/dev/null", "/dev/null", 7, "/dev/null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := SubjobOutputPaths(tt.path, "/home/a/e", tt.index); out != tt.want || err != subjobPath("/home/a/e", tt.index) {
				t.Errorf("SubjobOutputPaths(%q, %d) = %q, %q; want %q", tt.path, tt.index, out, err, tt.want)
			}
			if out, err := SubjobOutputPaths(tt.path, tt.path, tt.index); out != tt.want || err != tt.want {
				t.Errorf("joined: SubjobOutputPaths(%q, %d) = %q, %q; want %q twice", tt.path, tt.index, out, err, tt.want)
			}
		})
	}
}
