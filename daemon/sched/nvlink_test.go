package sched

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestNVLinkChoice: a multi-GPU job gets NVLink peers where the node has
// them (declared, or as NodeUp reports them, which wins and outlives a
// reload), and the adjacent GPUs where links do not tell them apart.
func TestNVLinkChoice(t *testing.T) {
	pairs02 := [][]int{{2}, {3}, {0}, {1}}                     // 0-2 and 1-3 linked
	pairs01 := [][]int{{1}, {0}, {3}, {2}}                     // 0-1 and 2-3 linked
	all := [][]int{{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}} // one NVSwitch
	tests := []struct {
		name     string
		declared [][]int
		reported [][]int // NodeUp's; nil: none
		busy     int     // GPUs a 1-GPU job per GPU holds first, from index 0 up
		gpus     int
		want     []int
	}{
		{"no links: adjacent", nil, nil, 0, 2, []int{0, 1}},
		{"declared peers", pairs02, nil, 0, 2, []int{0, 2}},
		{"reported peers win", pairs02, pairs01, 0, 2, []int{0, 1}},
		{"all-to-all: adjacent", all, nil, 0, 2, []int{0, 1}},
		{"peers among the free ones", pairs02, nil, 1, 2, []int{1, 3}},
		{"one GPU: adjacent rule", pairs02, nil, 0, 1, []int{0}},
		{"three GPUs: most pairs", [][]int{{3}, {2, 3}, {1, 3}, {0, 1, 2}}, nil, 0, 3, []int{1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{
				Partitions: []Partition{{Name: "p", PreemptionRetries: Unlimited, NodeFailureRetries: Unlimited, StartFailureRetries: Unlimited}},
				Nodes:      []Node{{Name: "n", Partition: "p", GPUs: 4, GPUPeers: tc.declared}},
				Shares:     []Share{{Name: "a", Partition: "p", GPUs: 4, Strategy: Lend}},
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Apply(NodeUp{Node: "n", GPUPeers: tc.reported}); err != nil {
				t.Fatal(err)
			}
			if tc.reported != nil {
				// A reload keeps what the node reported.
				if err := s.Apply(ConfigReplaced{Config: cfg}); err != nil {
					t.Fatal(err)
				}
			}
			now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := 0; i < tc.busy; i++ {
				if err := s.Apply(Adopted{Job: Job{ID: JobID("x" + string(rune('0'+i))), Share: "a", Seq: uint64(i + 1), Nodes: 1, GPUsPerNode: 1},
					Allocs: []Alloc{{Node: "n", GPUs: []int{i}}}, Started: now}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Apply(Submitted{Job: Job{ID: "j", Share: "a", Seq: 10, Nodes: 1, GPUsPerNode: tc.gpus}}); err != nil {
				t.Fatal(err)
			}
			p := s.Schedule(now)
			if len(p.Starts) != 1 || !slices.Equal(p.Starts[0].Allocs[0].GPUs, tc.want) {
				t.Fatalf("starts %+v, want GPUs %v", p.Starts, tc.want)
			}
		})
	}
}

// TestNVLinkPeersChecked: peers out of a node's range are refused, in
// the configuration and in NodeUp.
func TestNVLinkPeersChecked(t *testing.T) {
	cfg := Config{
		Partitions: []Partition{{Name: "p"}},
		Nodes:      []Node{{Name: "n", Partition: "p", GPUs: 2, GPUPeers: [][]int{{1}, {2}}}},
	}
	if _, err := New(cfg); !errors.Is(err, ErrInvalid) {
		t.Fatalf("New: %v", err)
	}
	cfg.Nodes[0].GPUPeers = [][]int{{1}, {0}, {0}}
	if _, err := New(cfg); !errors.Is(err, ErrInvalid) {
		t.Fatalf("New with peers of 3 GPUs on 2: %v", err)
	}
	cfg.Nodes[0].GPUPeers = nil
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(NodeUp{Node: "n", GPUPeers: [][]int{{-1}}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("NodeUp: %v", err)
	}
}
