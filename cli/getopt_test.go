package cli

import (
	"reflect"
	"strings"
	"testing"
)

func TestGetoptWords(t *testing.T) {
	value := map[string]bool{"N": true, "l": true, "j": true, "k": true, "p": true, "F": true, "u": true, "image": true, "since": true}
	boolean := map[string]bool{"h": true, "V": true, "f": true, "x": true, "a": true, "n": true, "1": true}
	tests := []struct {
		name     string
		in, want []string
	}{
		{"attached values", []string{"-Nfoo", "-joe", "-lwalltime=1:00:00", "x.sh"}, []string{"-N", "foo", "-j", "oe", "-l", "walltime=1:00:00", "x.sh"}},
		{"value in the next word", []string{"-N", "-lx", "-h", "-V", "--image", "-Nq"}, []string{"-N", "-lx", "-h", "-V", "--image", "-Nq"}},
		{"stops at the first operand", []string{"-N=foo", "--image=x", "s.sh", "-Nbar", "-fx"}, []string{"-N=foo", "--image=x", "s.sh", "-Nbar", "-fx"}},
		{"stops at --", []string{"--", "-Nfoo"}, []string{"--", "-Nfoo"}},
		{"unknown letter first: whole", []string{"-Zfoo", "-hZ"}, []string{"-Zfoo", "-hZ"}},
		{"booleans combine", []string{"-fx", "-xf", "-an1", "-hV"}, []string{"-f", "-x", "-x", "-f", "-a", "-n", "-1", "-h", "-V"}},
		{"booleans then a value option", []string{"-fFjson", "-xu", "alice", "12"}, []string{"-f", "-F", "json", "-x", "-u", "alice", "12"}},
		{"qsub -koe", []string{"-koe", "-hN", "name", "job.sh"}, []string{"-k", "oe", "-h", "-N", "name", "job.sh"}},
		{"negative value", []string{"-p", "-5", "-p-7"}, []string{"-p", "-5", "-p", "-7"}},
		{"long option names whole", []string{"-since", "7d", "-image=x"}, []string{"-since", "7d", "-image=x"}},
		{"value option last with no word left", []string{"-xN"}, []string{"-x", "-N"}},
		{"lone dash is an operand", []string{"-f", "-", "-x"}, []string{"-f", "-", "-x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := getoptWords(tt.in, value, boolean); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("getoptWords(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHoistOptionsGetopt(t *testing.T) {
	value := map[string]bool{"N": true, "l": true}
	boolean := map[string]bool{"h": true, "V": true}
	tests := []struct{ in, want []string }{
		{[]string{"job.sh", "-hN", "name", "-l", "ngpus=1"}, []string{"-h", "-N", "name", "-l", "ngpus=1", "job.sh"}},
		{[]string{"-hV", "--", "cmd", "-hN", "x"}, []string{"-h", "-V", "--", "cmd", "-hN", "x"}},
	}
	for _, tt := range tests {
		if got := hoistOptions(tt.in, value, boolean); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("hoistOptions(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzGetoptWord: a word is left whole, or split into single-letter
// options (each a known one) and at most one value, which put back
// together spell the word again.
func FuzzGetoptWord(f *testing.F) {
	value := map[string]bool{"N": true, "l": true, "k": true, "F": true, "image": true}
	boolean := map[string]bool{"h": true, "V": true, "f": true, "x": true, "1": true}
	for _, s := range []string{"-fx", "-an1", "-koe", "-hVNname", "-lwalltime=1:00:00", "--image=x", "-image", "-", "--", "-f-", "-h\x00", "-é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		words, wantsValue := getoptWord(w, value, boolean)
		if len(words) == 1 && words[0] == w {
			return
		}
		var b strings.Builder
		for i, x := range words {
			opt := strings.TrimPrefix(x, "-")
			switch {
			case i == len(words)-1 && i > 0 && value[strings.TrimPrefix(words[i-1], "-")]:
				b.WriteString(x) // the attached value
			case len(x) == 2 && x[0] == '-' && (boolean[opt] || value[opt]):
				if value[opt] && i < len(words)-2 {
					t.Fatalf("%q: value option %s before %q", w, x, words[i+1:])
				}
				b.WriteString(opt)
			default:
				t.Fatalf("%q split into %q: %q is neither a known option nor a value", w, words, x)
			}
		}
		if "-"+b.String() != w {
			t.Fatalf("%q split into %q, which spells %q", w, words, "-"+b.String())
		}
		n := len(words)
		valueLast := n > 1 && value[strings.TrimPrefix(words[n-2], "-")] && len(words[n-2]) == 2
		if last := strings.TrimPrefix(words[n-1], "-"); wantsValue != (!valueLast && value[last] && len(words[n-1]) == 2) {
			t.Fatalf("%q: wantsValue %v after %q", w, wantsValue, words)
		}
	})
}
