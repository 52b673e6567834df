package conf

import "testing"

// TestDSNPassword: a connection string with a password is found in every
// form libpq and pgx read; one without is not mistaken for one.
func TestDSNPassword(t *testing.T) {
	tests := []struct {
		name string
		dsn  string
		want bool
	}{
		{"empty", "", false},
		{"key/value, no password", "host=db01 dbname=sharq user=sharq", false},
		{"key/value, passfile", "host=db01 user=sharq passfile=/etc/sharq/pgpass", false},
		{"key/value, password", "host=db01 user=sharq password=s3cret", true},
		{"key/value, password first", "password=s3cret host=db01", true},
		{"key/value, spaces around =", "host = db01 password = s3cret", true},
		{"key/value, quoted", "host=db01 password='a b\\'c'", true},
		{"key/value, password inside a quoted value", "host=db01 options='-c password=x' user=sharq", false},
		{"key/value, a key that ends in password", "host=db01 notpassword=x", false},
		{"url, no password", "postgres://sharq@db01/sharq?sslmode=require", false},
		{"url, password in user info", "postgres://sharq:s3cret@db01/sharq", true},
		{"postgresql url, password in user info", "postgresql://sharq:s3cret@db01:5432/sharq", true},
		{"url, password parameter", "postgres://sharq@db01/sharq?password=s3cret", true},
		{"url, unparsable with a password", "postgres://sharq:s3%zz@db01/sharq", true},
		{"url, unparsable without one", "postgres://sharq@db01/%zz", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dsnPassword(tt.dsn); got != tt.want {
				t.Errorf("dsnPassword(%q) = %v, want %v", tt.dsn, got, tt.want)
			}
		})
	}
}
