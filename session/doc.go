// Package session is the wire of an interactive session (qsub -I, qexec):
// the frames a client and a node daemon exchange on the node's session
// port once the controller has issued a one-time token for it, and the
// payloads of the few frames that carry more than bytes.
//
// A frame is one type byte, a big-endian uint32 payload length and the
// payload; every length is bounded (MaxPayload, and per type below it),
// and ReadFrame refuses an unknown type or an oversized length before it
// reads the payload, so no peer can make the other allocate more than
// MaxPayload. The first frame on a connection is the client's Hello; the
// node answers Ready or Refused. Then the client sends Stdin, Resize and
// EOF frames, the node Stdout, Stderr and Notice frames, and finally one
// Exit frame before it closes the connection.
package session
