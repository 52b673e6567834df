package sim

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDecodeActions(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Action
		wantErr []error // sentinels, one per bad row, in order
	}{
		{name: "good", in: "# c\nt_s,action,target,value\n5,hold,j1,\n7.5,prio,j1,42\n8,down,n1,\n9,cancel,\"j,2\",\n",
			want: []Action{
				{Line: 3, At: 5 * time.Second, Kind: ActHold, Target: "j1"},
				{Line: 4, At: 7500 * time.Millisecond, Kind: ActPrio, Target: "j1", Value: 42},
				{Line: 5, At: 8 * time.Second, Kind: ActDown, Target: "n1"},
				{Line: 6, At: 9 * time.Second, Kind: ActCancel, Target: "j,2"},
			}},
		{name: "no value column", in: "action,target,t_s\nup,n1,0\nresume,n2,1\n",
			want: []Action{{Line: 2, Kind: ActUp, Target: "n1"}, {Line: 3, At: time.Second, Kind: ActResume, Target: "n2"}}},
		{name: "header only", in: "t_s,action,target\n"},
		{name: "no header", in: "", wantErr: []error{ErrBadHeader}},
		{name: "missing column", in: "t_s,action\n1,up\n", wantErr: []error{ErrMissingColumn}},
		{name: "unknown column", in: "t_s,action,target,when\n", wantErr: []error{ErrBadHeader}},
		{name: "bad rows", in: "t_s,action,target,value\n-1,hold,j1,\nx,hold,j1,\n1,explode,j1,\n1,hold,,\n1,prio,j1,\n1,prio,j1,10000\n1,hold,j1,3\n1,hold\n",
			wantErr: []error{ErrOutOfRange, ErrBadNumber, ErrOutOfRange, ErrEmptyField, ErrEmptyField, ErrOutOfRange, ErrOutOfRange, ErrFieldCount}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeActions(strings.NewReader(tc.in))
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %+v\nwant %+v", got, tc.want)
				}
				return
			}
			var te *TraceError
			switch {
			case errors.As(err, &te):
				if len(te.Rows) != len(tc.wantErr) {
					t.Fatalf("%d bad rows, want %d: %v", len(te.Rows), len(tc.wantErr), err)
				}
				for i, w := range tc.wantErr {
					if !errors.Is(te.Rows[i], w) {
						t.Errorf("row %d: %v, want %v", i, te.Rows[i], w)
					}
				}
			case err == nil || !errors.Is(err, tc.wantErr[0]):
				t.Fatalf("err %v, want %v", err, tc.wantErr[0])
			}
		})
	}
}

func TestValidateActions(t *testing.T) {
	cl, err := LoadCluster("testdata/actions/cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	jobs := []TraceJob{{ID: "j1"}}
	acts := []Action{{Line: 2, Kind: ActCancel, Target: "j1"}, {Line: 3, Kind: ActHold, Target: "n1"},
		{Line: 4, Kind: ActDown, Target: "j1"}, {Line: 5, Kind: ActDown, Target: "n2"}}
	err = ValidateActions(&cl, jobs, acts)
	var te *TraceError
	if !errors.As(err, &te) || len(te.Rows) != 2 || te.Rows[0].Line != 3 || te.Rows[1].Line != 4 || !errors.Is(err, ErrUnknownTarget) {
		t.Fatalf("got %v", err)
	}
}

func FuzzActions(f *testing.F) {
	f.Add([]byte("t_s,action,target,value\n5,hold,j1,\n7.5,prio,j1,42\n8,down,n1,\n"))
	f.Add(gz(f, "t_s,action,target\n1,up,n1\n"))
	f.Add([]byte("t_s,action,target,value\n1e3,prio,\"a\"\"b\",-1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		acts, err := DecodeActions(bytes.NewReader(data))
		if err != nil {
			var te *TraceError
			if errors.As(err, &te) && len(te.Rows) == 0 {
				t.Fatalf("TraceError without rows")
			}
			return
		}
		for _, a := range acts {
			if a.At < 0 || a.Target == "" || int(a.Kind) >= len(actionNames) || a.Value < 0 || a.Value > MaxPriority {
				t.Fatalf("bad action %+v", a)
			}
		}
	})
}
