// Package testcert makes TLS certificates for tests: a self-signed
// certificate for 127.0.0.1 that is its own CA.
package testcert
