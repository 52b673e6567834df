package ctld

import (
	"context"
	"fmt"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/daemon/schedconf"
)

// reconfigure reads the configuration file again; a bad file changes nothing.
func (c *Controller) reconfigure(ctx context.Context, id Identity) *api.Response {
	var admin bool
	var path string
	if err := c.do(ctx, func() { admin, path = c.auth.isAdmin(id), c.cfg.File }); err != nil {
		return &api.Response{Error: &api.Error{Code: api.CodeInternal, Message: err.Error()}}
	}
	if !admin {
		return &api.Response{Error: &api.Error{Code: api.CodePermission, Message: "only admins may reconfigure"}}
	}
	if err := c.Reload(ctx, path); err != nil {
		return &api.Response{Error: &api.Error{Code: api.CodeConfig, Message: err.Error()}}
	}
	return &api.Response{Text: "reconfigured from " + path}
}

// Reload parses path and installs it if it is valid. The old configuration
// stays in force when the file has errors or the core refuses it.
func (c *Controller) Reload(ctx context.Context, path string) error {
	cfg, err := conf.Load(path)
	if err != nil {
		c.log.Error("reload refused: the old configuration stays", "file", path, "err", err)
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	var applyErr error
	if err := c.do(ctx, func() { applyErr = c.replaceConfig(cfg) }); err != nil {
		return err
	}
	if applyErr != nil {
		c.log.Error("reload refused: the old configuration stays", "file", path, "err", applyErr)
		return applyErr
	}
	c.log.Info("configuration reloaded", "file", path)
	return nil
}

func (c *Controller) replaceConfig(cfg *conf.Config) error {
	if cfg.Cluster.Name != c.cfg.Cluster.Name {
		return fmt.Errorf("%w: cluster name cannot change (%q to %q): job ids depend on it", ErrConfig, c.cfg.Cluster.Name, cfg.Cluster.Name)
	}
	// Recorded before nodes are granted it (lease.go).
	if err := c.keepLease(bgctx, cfg.Cluster.JobLease); err != nil {
		return err
	}
	if err := c.core.Apply(sched.ConfigReplaced{Config: schedconf.Config(cfg)}); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	c.installConfig(cfg)
	c.resyncNodes()
	c.needPass = true
	return nil
}
