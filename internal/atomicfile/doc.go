// Package atomicfile replaces a file's contents so that a crash leaves
// either the old file or the whole new one: a temporary file beside it,
// synced, renamed over it, and the directory synced.
package atomicfile
