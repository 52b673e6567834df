# sharq build, test and local-cluster targets. See README.md.
GO        ?= go
BIN       ?= bin
# go-nvml's headers print deprecation warnings; they are harmless.
export CGO_CFLAGS ?= -Wno-deprecated-declarations
# (The tests build with cgo, as go does by default; build says per binary.)
export CGO_ENABLED = 1
# urfave/cli without its man-page and markdown generators (and blackfriday):
# the client commands start faster (contrib/bench/vs-slurm.sh).
export GOFLAGS += -tags=urfave_cli_no_docs

.PHONY: all build etcd test test-unit vet fmt-check lint tidy-check cgo-check tools bench bench-system up demo clean deps local-deps man install uninstall

all: build

# cgo only for the binaries that need the C library: sharqd and sharq-gpus
# load NVIDIA's NVML with dlopen (go-nvml), and sharqctld asks NSS (LDAP,
# sssd: getpwuid_r, getgrouplist) for its users' groups. Everything else is
# pure Go (MUNGE included: internal/munge speaks munged's socket protocol),
# so the client commands are static binaries by themselves: sharqd
# bind-mounts them into job containers, whose image may have no C library.
CGO_CMDS  = sharqd sharq-gpus sharqctld
CLIENTS   = qsub qstat qdel qhold qrls qalter qexec qselect pbsnodes qsig qrerun qmove qorder tracejob sharqctl
PURE_CMDS = $(filter-out $(CGO_CMDS),$(notdir $(wildcard cmd/*)))

build:
	@mkdir -p $(BIN)
	CGO_ENABLED=1 $(GO) build -trimpath -o $(BIN)/ $(addprefix ./cmd/,$(CGO_CMDS))
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ $(addprefix ./cmd/,$(PURE_CMDS))
	@for c in $(CLIENTS); do $(GO) version -m $(BIN)/$$c | grep -q 'CGO_ENABLED=0' || \
		{ echo "$(BIN)/$$c is built with cgo: the client commands must be static (pure Go)" >&2; exit 1; }; done

# The manual pages in man/, made from the commands' definitions (what
# --help prints) and contrib/examples/cluster.toml's comments by
# internal/tools/mangen; its test fails when they are not current.
man:
	$(GO) run ./internal/tools/mangen

# make install [PREFIX=/usr/local] [DESTDIR=]: the daemons to sbin, every
# other command but sharq-up (a development tool) to bin, the manual pages
# (gzipped) to share/man, bash completion (one file, a link per command it
# completes) and the systemd units (their paths under PREFIX) to
# lib/systemd/system, the documentation and example configurations to
# share/doc/sharq. Nothing outside DESTDIR$(PREFIX).
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
SBINDIR     ?= $(PREFIX)/sbin
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
UNITDIR     ?= $(PREFIX)/lib/systemd/system
DOCDIR      ?= $(PREFIX)/share/doc/sharq
DAEMONS      = sharqctld sharqd
BIN_CMDS     = $(filter-out $(DAEMONS) sharq-up,$(notdir $(wildcard cmd/*)))
COMPLETED    = $(shell sed -n 's/^complete -F [^ ]* //p' contrib/completion/sharq.bash)
MANPAGES     = $(wildcard man/*.[158])
UNITS        = $(wildcard contrib/systemd/*.service)
DOCS         = README.md ARCHITECTURE.md SECURITY.md $(wildcard contrib/examples/*.toml)

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(DOCDIR) $(addprefix $(DESTDIR)$(MANDIR)/man,1 5 8)
	install -m 755 $(addprefix $(BIN)/,$(BIN_CMDS)) $(DESTDIR)$(BINDIR)/
	install -m 755 $(addprefix $(BIN)/,$(DAEMONS)) $(DESTDIR)$(SBINDIR)/
	for p in $(MANPAGES); do \
		gzip -9nc $$p > $(DESTDIR)$(MANDIR)/man$${p##*.}/$${p##*/}.gz || exit 1; done
	install -m 644 contrib/completion/sharq.bash $(DESTDIR)$(BASHCOMPDIR)/sharq
	for c in $(COMPLETED); do ln -sfn sharq $(DESTDIR)$(BASHCOMPDIR)/$$c || exit 1; done
	for u in $(UNITS); do \
		sed -e 's|/usr/local/|$(PREFIX)/|g' -e 's|file:///usr/share/doc/sharq/|file://$(DOCDIR)/|g' $$u \
			> $(DESTDIR)$(UNITDIR)/$${u##*/} && chmod 644 $(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; done
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(BIN_CMDS)) $(addprefix $(DESTDIR)$(SBINDIR)/,$(DAEMONS)) \
		$(foreach p,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p)).gz) \
		$(addprefix $(DESTDIR)$(BASHCOMPDIR)/,sharq $(COMPLETED)) \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(notdir $(UNITS))) $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOCS)))
	-rmdir $(DESTDIR)$(DOCDIR)

# etcd and etcdctl for an HA cluster (README: High availability), built
# from the etcd release go.mod pins, the one the tests run, by the module
# in contrib/etcd (etcd's own go.mod has replace directives, so go install
# ...@version cannot build it). The two pins must agree.
etcd:
	@mkdir -p $(BIN)
	@want=$$($(GO) list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3); \
	have=$$(cd contrib/etcd && GOFLAGS= $(GO) list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3); \
	[ "$$want" = "$$have" ] || { echo "contrib/etcd/go.mod pins etcd $$have, go.mod $$want: update contrib/etcd" >&2; exit 1; }
	cd contrib/etcd && GOFLAGS= CGO_ENABLED=0 $(GO) build -trimpath -o $(abspath $(BIN))/ ./etcd ./etcdctl

# Tests run as root: they start a private containerd, real daemons and real
# containers. deps installs the Debian packages they need (nothing that is
# already there), so make test works on a fresh machine as README says.
test: deps vet fmt-check tidy-check lint cgo-check
	$(GO) test -race -timeout 40m ./...

# The tests that need no root, containerd, runc, MUNGE, PostgreSQL,
# promtool, qemu or device files: they run anywhere, as anyone, in a few minutes.
# A test file that needs any of those starts with //go:build !unit (where a
# file mixed both kinds, the system tests moved to a *_root_test.go,
# *_munge_test.go or *_pg_test.go file beside it), so -tags unit leaves it
# out and plain go test (make test) keeps it. The unit build is vetted too,
# so a helper the unit tests call cannot hide in a !unit file.
test-unit: vet fmt-check cgo-check
	$(GO) vet -tags=urfave_cli_no_docs,unit ./...
	$(GO) test -race -tags=urfave_cli_no_docs,unit ./...

# staticcheck, built from a pinned module version into $(BIN)/tools.
STATICCHECK_VERSION = v0.8.2
STATICCHECK = $(BIN)/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck
tools: $(STATICCHECK)
$(STATICCHECK):
	GOBIN=$(abspath $(dir $(STATICCHECK))) GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: $(STATICCHECK)
	$(STATICCHECK) -tags urfave_cli_no_docs ./...

# No sharq package uses cgo itself (import "C"): the binaries that need the
# C library get it from go-nvml and the standard library (see build).
cgo-check:
	@out=$$($(GO) list -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./...); \
	if [ -n "$$out" ]; then echo "packages that import \"C\" (see build):"; echo "$$out"; exit 1; fi

# go.mod and go.sum are what go mod tidy makes.
tidy-check:
	$(GO) mod tidy -diff

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Go benchmarks of the scheduling core, the spool, the controller's qstat
# path, the config loader and the simulator (a few minutes).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./daemon/sched/ ./spool/ ./acct/ ./daemon/ctld/ ./conf/ ./sim/

# Whole-system figures (as root): submissions/s, qsub and qstat times
# (contrib/bench/ctld.sh), the ITP trace through sharq-sim, and qsub-to-
# container and reclaim-to-SIGTERM latencies with real containers.
bench-system:
	contrib/bench/ctld.sh
	contrib/bench/sim-itp.sh
	$(GO) test -run '^$$' -bench . -benchtime 5x ./e2e/

# A working local cluster in the foreground; Ctrl-C stops it cleanly.
up: local-deps build
	contrib/local/up.sh

demo: local-deps build
	contrib/local/demo.sh

local-deps:
	contrib/local/install-deps.sh

deps:
	contrib/local/install-deps.sh --test

clean:
	rm -rf $(BIN)
