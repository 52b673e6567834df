package ctld

import "testing"

func TestOutputPaths(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"default", "", "/home/a/train.o12"},
		{"directory", "/home/a/logs/", "/home/a/logs/train.o12"},
		{"file", "/home/a/x.log", "/home/a/x.log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outputPath(tt.path, "/home/a", "train.o12"); got != tt.want {
				t.Errorf("outputPath(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestSubjobPath(t *testing.T) {
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
			if got := subjobPath(tt.path, tt.index); got != tt.want {
				t.Errorf("subjobPath(%q, %d) = %q, want %q", tt.path, tt.index, got, tt.want)
			}
		})
	}
}
