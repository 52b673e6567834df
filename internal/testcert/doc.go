// Package testcert makes TLS certificates for tests: a self-signed
// certificate for 127.0.0.1 (and given names) that is its own CA, or a CA
// that issues each host a certificate naming it.
package testcert
