// Package schedconf turns the cluster configuration (conf) into the
// scheduling core's Config (daemon/sched). It is apart from both so that
// conf, which every client command reads, links no part of the core, and
// the core reads no configuration file: the controller and the simulator
// import it.
package schedconf
