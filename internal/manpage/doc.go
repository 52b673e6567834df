// Package manpage writes manual pages in roff (man(7) macros) from what
// sharq's commands and configuration already define: a command's urfave/cli
// App (its usage, description, options and subcommands, the same text its
// --help prints) and the commented example configuration, whose keys it
// checks against the loader's. internal/tools/mangen writes the pages of
// every command into man/; its tests check the checked-in pages are
// current.
//
// It has its own small roff writer rather than urfave's docs build (which
// the shipped binaries leave out: -tags urfave_cli_no_docs).
package manpage
