package cli

// funcValue is a flag.Value whose Set is a function, so that options can
// parse straight into a command's option struct (and repeat: -l a -l b).
type funcValue func(string) error

func (f funcValue) Set(s string) error { return f(s) }
func (f funcValue) String() string     { return "" }
