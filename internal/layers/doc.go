// Package layers holds the test of the project's layer rules: which
// packages may link which (tailscale's deptest, by go list). It has no
// code of its own.
package layers
