package conf

import "testing"

func TestCheckPrincipal(t *testing.T) {
	tests := []struct {
		entry    string
		wildcard bool
		ok       bool
	}{
		{"alice", false, true},
		{"_svc", false, true},
		{"Svc.Account-1", false, true},
		{"machine$", false, true},
		{"@vision", false, true},
		{"*", true, true},
		{"*", false, false},
		{"@", false, false},
		{"@@x", false, false},
		{"1abc", false, false},
		{"-x", false, false},
		{"a b", false, false},
		{"", false, false},
		{"$", false, false},
		{"a234567890123456789012345678901234", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			why := checkPrincipal(tt.entry, tt.wildcard)
			if (why == "") != tt.ok {
				t.Errorf("checkPrincipal(%q, %v) = %q, want ok=%v", tt.entry, tt.wildcard, why, tt.ok)
			}
		})
	}
}
