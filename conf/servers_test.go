package conf

import (
	"reflect"
	"testing"
)

// Where client commands of other hosts find the controller.
func TestServers(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		want    []string
	}{
		{"no client port", `listen = "0.0.0.0:6820"`, nil},
		{"controller host, client port", "controller = \"ctl01:6820\"\nclient_listen = \"0.0.0.0:6818\"", []string{"ctl01:6818"}},
		{"listen only", `client_listen = ":6818"`, []string{"127.0.0.1:6818"}},
		{"explicit list", "client_listen = \":6818\"\nservers = [\"ctl01:6818\", \"ctl02:6818\"]", []string{"ctl01:6818", "ctl02:6818"}},
		{"list without own port", `servers = ["ctl01:6818"]`, []string{"ctl01:6818"}},
		{"every controller", "controllers = [\"ctl01:6820\", \"ctl02:6820\"]\nclient_listen = \":6818\"", []string{"ctl01:6818", "ctl02:6818"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "[cluster]\nname = \"x\"\n" + tt.cluster + "\n" + `
[[partition]]
name = "gpu"
nodes = "n1"
[[node]]
names = "n1"
gpus = 1
[[share]]
name = "all"
partition = "gpu"
gpus = 1
users = ["*"]
`
			c, err := Parse("t.toml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Cluster.Servers, tt.want) {
				t.Errorf("servers %q, want %q", c.Cluster.Servers, tt.want)
			}
		})
	}
}
