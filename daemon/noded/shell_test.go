package noded

import (
	"errors"
	"slices"
	"testing"
)

func TestScriptArgs(t *testing.T) {
	const p = "/var/lib/sharq/jobs/5.lab/script"
	tests := []struct {
		name, script, shell string
		want                []string
		wantErr             bool
	}{
		{"no #! line", "echo hi\n", "", []string{"/bin/sh", p}, false},
		{"bash", "#!/bin/bash\necho hi\n", "", []string{"/bin/bash", p}, false},
		{"tcsh with an argument", "#!/bin/tcsh -f\necho hi\n", "", []string{"/bin/tcsh", "-f", p}, false},
		{"env python", "#!/usr/bin/env python3\nprint(1)\n", "", []string{"/usr/bin/env", "python3", p}, false},
		{"one argument, as the kernel passes it", "#!/usr/bin/env -S python3 -u\n", "", []string{"/usr/bin/env", "-S python3 -u", p}, false},
		{"blank after #!", "#! /bin/bash \r\necho\n", "", []string{"/bin/bash", p}, false},
		{"tab", "#!/bin/bash\t-e\n", "", []string{"/bin/bash", "-e", p}, false},
		{"empty #!", "#!\necho\n", "", []string{"/bin/sh", p}, false},
		{"-S wins", "#!/bin/bash\n", "/bin/zsh", []string{"/bin/zsh", p}, false},
		{"not on the first line", "\n#!/bin/bash\n", "", []string{"/bin/sh", p}, false},
		{"relative interpreter", "#!bash\n", "", nil, true},
		{"relative -S", "echo\n", "bash", nil, true},
		{"overlong", "#!/bin/" + string(make([]byte, 300)) + "\n", "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scriptArgs(tt.script, tt.shell, p)
			if tt.wantErr {
				if !errors.Is(err, ErrBadOrder) {
					t.Fatalf("err = %v, want ErrBadOrder", err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("scriptArgs = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
