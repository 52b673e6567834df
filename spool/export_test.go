package spool

// Hooks for the external tests (package spool_test).

// OptionsCheckpointAfter returns Options whose spool checkpoints once its
// overlay holds more than entries records and state keys, and whose log
// file starts over past logSize bytes.
func OptionsCheckpointAfter(entries int, logSize int64) Options {
	return Options{limits: walLimits{entries: entries, bytes: defaultLimits.bytes, logSize: logSize}}
}

// Abandon closes b's files as a kill -9 would: no checkpoint, so the next
// Open replays the log.
func (b *Bolt) Abandon() error { return b.abandon() }
