package containerd

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc"
)

// WithCallCounter counts the calls the runtime makes to the daemon (unary
// and streams), for benchmarks.
func WithCallCounter(n *atomic.Int64) Option {
	return func(c *Containerd) {
		c.dialOpts = append(c.dialOpts,
			grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				n.Add(1)
				return invoker(ctx, method, req, reply, cc, opts...)
			}),
			grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				n.Add(1)
				return streamer(ctx, desc, cc, method, opts...)
			}))
	}
}
