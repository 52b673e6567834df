// Package accttest is the conformance suite for acct.Store
// implementations. A backend's test calls Run with a Factory.
package accttest
