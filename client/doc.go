// Package client talks to sharqctld: one connection per request, one JSON
// line each way (api.Encode, api.Decoder). On the controller host it uses
// the Unix socket, and the controller learns who is calling from the
// socket itself (SO_PEERCRED); from any other host (a login node, a job's
// container) it dials the controller's TCP client port and sends, before
// the request, a MUNGE credential from the local munged whose payload is
// the request's digest (api.Credential, api.RequestPayload). Locate
// chooses between them from SHARQ_SERVER, SHARQ_SOCKET and the cluster
// configuration; every connection error names the transport it used and
// what chose it.
package client
