package conf

import "testing"

func TestPermits(t *testing.T) {
	tests := []struct {
		name   string
		users  []string
		user   string
		groups []string
		want   bool
	}{
		{"by name", []string{"alice"}, "alice", nil, true},
		{"other name", []string{"alice"}, "bob", nil, false},
		{"by group", []string{"@vision"}, "bob", []string{"users", "vision"}, true},
		{"not in group", []string{"@vision"}, "bob", []string{"users"}, false},
		{"group name is not a user", []string{"@bob"}, "bob", nil, false},
		{"wildcard", []string{"*"}, "anyone", nil, true},
		{"empty list", nil, "alice", []string{"alice"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Share{Users: tt.users}
			if got := s.Permits(tt.user, tt.groups); got != tt.want {
				t.Errorf("Permits(%q, %q) = %v, want %v", tt.user, tt.groups, got, tt.want)
			}
		})
	}
}

func TestIsAdmin(t *testing.T) {
	c := Cluster{Admins: []string{"root", "@hpcadmin", "*"}}
	tests := []struct {
		user   string
		groups []string
		want   bool
	}{
		{"root", nil, true},
		{"carol", []string{"hpcadmin"}, true},
		{"dave", []string{"users"}, false}, // "*" never makes everyone an admin
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			if got := c.IsAdmin(tt.user, tt.groups); got != tt.want {
				t.Errorf("IsAdmin(%q, %q) = %v, want %v", tt.user, tt.groups, got, tt.want)
			}
		})
	}
}

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
