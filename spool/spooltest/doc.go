// Package spooltest is the conformance suite for spool.Spool
// implementations. A backend's test calls Run with a Factory; persistent
// backends also give Factory.Reopen so that durability across close and
// reopen is checked.
package spooltest
