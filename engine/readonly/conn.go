package readonly

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// The gate is asked before a write enters the transport, but a write can
// still wait there (for a stream, for the connection's write lock, for the
// CPU) and a process paused in that moment sends it on waking, after the
// Lease moved. So the engine's own writes ride connections of their own,
// and those connections ask the gate again before every write to the
// socket: the last moment the process decides anything. Bytes already
// handed to the kernel went out before the pause; none are sent after it.

// gatedTransport returns a transport like cfg's whose connections refuse
// to send while g is closed (nil when cfg brings its own transport, which
// has no dialer to wrap: such writes are checked only at the gate).
func gatedTransport(cfg *rest.Config, g *Gate) http.RoundTripper {
	wc := SendWhile(cfg, g.Open, func() error {
		return &Error{Verb: "send", What: "a write already in the transport", Fenced: g.open.Load()}
	})
	if wc == nil {
		return nil
	}
	rt, err := rest.TransportFor(wc)
	if err != nil {
		return nil
	}
	return rt
}

// SendWhile returns a copy of cfg whose connections write to the socket
// only while may reports true: the first refused write closes its
// connection with refused's error, so nothing queued behind it goes
// either. The Lease's writes ride such connections too (lease.Fence's
// MaySend). Nil when cfg brings its own transport: there is no dialer to
// wrap.
func SendWhile(cfg *rest.Config, may func() bool, refused func() error) *rest.Config {
	if cfg.Transport != nil {
		return nil
	}
	wc := rest.CopyConfig(cfg)
	dial := wc.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	wc.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &gatedConn{Conn: c, may: may, refused: refused}, nil
	}
	return wc
}

// gatedConn is a connection that sends only while may holds; the first
// refused write closes it, so nothing queued behind goes either.
type gatedConn struct {
	net.Conn
	may     func() bool
	refused func() error
	once    sync.Once
}

func (c *gatedConn) Write(p []byte) (int, error) {
	if !c.may() {
		c.once.Do(func() { _ = c.Conn.Close() })
		return 0, c.refused()
	}
	return c.Conn.Write(p)
}
