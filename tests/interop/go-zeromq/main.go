// Command peer is one end of a ferromq interop exchange on go-zeromq/zmq4, driven by
// tests/tests/foreign_peers.rs. It takes the same arguments as the JeroMQ peer
// (tests/interop/jeromq): ROLE TYPE bind|connect ENDPOINT COUNT [options], roles send, recv,
// echo and req, message i = [topic ("A"+i even, "B"+i odd), empty frame, body ("body-"+i, or
// 1 MiB of 'z' for i == 2)], a SUB subscribed to "A", a PUB warming up until a stdin line (an
// XPUB waiting for the subscription instead),
// "ENDPOINT tcp://..." as the first stdout line when binding, exit 0 only when everything
// expected arrived. go-zeromq has no CURVE and no heartbeat options; its PLAIN server accepts
// any credentials (it has no ZAP). Options: --id, --peer-id, --plain-client USER:PASS,
// --plain-server USER:PASS, --pause MS, --no-empty.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/plain"
)

const timeout = 10 * time.Second

// noEmpty drops the empty middle frame from every message: go-zeromq's REP splits the
// envelope at the last empty frame instead of the first (docs/compatibility.md).
var noEmpty bool

func main() {
	if len(os.Args) < 6 {
		fmt.Fprintln(os.Stderr, "usage: peer ROLE TYPE bind|connect ENDPOINT COUNT [options]")
		os.Exit(2)
	}
	role, typ, mode, endpoint := os.Args[1], strings.ToUpper(os.Args[2]), os.Args[3], os.Args[4]
	count, err := strconv.Atoi(os.Args[5])
	if err != nil {
		fail("bad count: %v", err)
	}
	fs := flag.NewFlagSet("peer", flag.ExitOnError)
	id := fs.String("id", "", "own routing id")
	peerID := fs.String("peer-id", "", "routing id a ROUTER must see")
	plainServer := fs.String("plain-server", "", "USER:PASS (go-zeromq checks none)")
	plainClient := fs.String("plain-client", "", "USER:PASS")
	pause := fs.Int("pause", 0, "ms to wait before each echo reply")
	fs.BoolVar(&noEmpty, "no-empty", false, "messages without the empty middle frame")
	if err := fs.Parse(os.Args[6:]); err != nil {
		fail("%v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opts []zmq4.Option
	if *id != "" {
		opts = append(opts, zmq4.WithID(zmq4.SocketIdentity(*id)))
	}
	for _, up := range []string{*plainServer, *plainClient} {
		if up != "" {
			u, p, _ := strings.Cut(up, ":")
			opts = append(opts, zmq4.WithSecurity(plain.Security(u, p)))
		}
	}
	opts = append(opts, zmq4.WithDialerMaxRetries(40))
	var s zmq4.Socket
	switch typ {
	case "PAIR":
		s = zmq4.NewPair(ctx, opts...)
	case "PUB":
		s = zmq4.NewPub(ctx, opts...)
	case "SUB":
		s = zmq4.NewSub(ctx, opts...)
	case "XPUB":
		s = zmq4.NewXPub(ctx, opts...)
	case "XSUB":
		s = zmq4.NewXSub(ctx, opts...)
	case "REQ":
		s = zmq4.NewReq(ctx, opts...)
	case "REP":
		s = zmq4.NewRep(ctx, opts...)
	case "DEALER":
		s = zmq4.NewDealer(ctx, opts...)
	case "ROUTER":
		s = zmq4.NewRouter(ctx, opts...)
	case "PUSH":
		s = zmq4.NewPush(ctx, opts...)
	case "PULL":
		s = zmq4.NewPull(ctx, opts...)
	default:
		fail("unknown socket type %s", typ)
	}
	defer s.Close()
	if typ == "SUB" {
		if err := s.SetOption(zmq4.OptionSubscribe, "A"); err != nil {
			fail("subscribe: %v", err)
		}
	}
	if mode == "bind" {
		if err := s.Listen(endpoint); err != nil {
			fail("listen %s: %v", endpoint, err)
		}
		fmt.Printf("ENDPOINT tcp://%s\n", s.Addr())
	} else if err := s.Dial(endpoint); err != nil {
		fail("dial %s: %v", endpoint, err)
	}

	router := typ == "ROUTER"
	switch role {
	case "send":
		if typ == "PUB" {
			warmUp(s)
		}
		if typ == "XPUB" {
			sub := recv(s, -1)
			if len(sub) != 1 || !bytes.Equal(sub[0], []byte("\x01A")) {
				fail("XPUB got %s, want [\"\\x01A\"]", describe(sub))
			}
		}
		for i := 0; i < count; i++ {
			send(s, message(i))
		}
		// go-zeromq has no linger: Close drops what its writers still hold, so wait for the
		// receiver to hang up (it does once everything arrived) or for the timeout.
		waitPeerGone(s)
	case "recv":
		for i := 0; i < count; i++ {
			if typ == "SUB" && i%2 == 1 {
				continue
			}
			got := recv(s, i)
			if router {
				got = stripID(got, *peerID)
			}
			expect(got, message(i), i)
		}
	case "echo":
		for i := 0; i < count; i++ {
			got := recv(s, i)
			body := got
			if router {
				body = stripID(got, *peerID)
			}
			expect(body, message(i), i)
			time.Sleep(time.Duration(*pause) * time.Millisecond)
			send(s, got)
		}
		waitPeerGone(s)
	case "req":
		for i := 0; i < count; i++ {
			send(s, message(i))
			expect(recv(s, i), message(i), i)
		}
	default:
		fail("unknown role %s", role)
	}
	os.Exit(0)
}

func message(i int) [][]byte {
	topic := "B"
	if i%2 == 0 {
		topic = "A"
	}
	body := []byte("body-" + strconv.Itoa(i))
	if i == 2 {
		body = bytes.Repeat([]byte{'z'}, 1<<20)
	}
	if noEmpty {
		return [][]byte{[]byte(topic + strconv.Itoa(i)), body}
	}
	return [][]byte{[]byte(topic + strconv.Itoa(i)), {}, body}
}

func send(s zmq4.Socket, parts [][]byte) {
	done := make(chan error, 1)
	go func() {
		for {
			err := s.Send(zmq4.NewMsgFrom(parts...))
			// go-zeromq's REQ fails a send while it has no connection instead of waiting
			// for one (libzmq's and ferromq's block): wait here, as the bound REQ's peer
			// may still be connecting.
			if err == nil || !strings.Contains(err.Error(), "no connections available") {
				done <- err
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			fail("send: %v", err)
		}
	case <-time.After(timeout):
		fail("send timed out")
	}
}

func recv(s zmq4.Socket, i int) [][]byte {
	type result struct {
		msg zmq4.Msg
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := s.Recv()
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			fail("message %d: recv: %v", i, r.err)
		}
		return r.msg.Frames
	case <-time.After(timeout):
		fail("timed out waiting for message %d", i)
	}
	return nil
}

func stripID(got [][]byte, peerID string) [][]byte {
	if len(got) == 0 {
		fail("empty message on a ROUTER")
	}
	if peerID != "" && string(got[0]) != peerID {
		fail("routing id %q, want %q", got[0], peerID)
	}
	return got[1:]
}

func expect(got, want [][]byte, i int) {
	same := len(got) == len(want)
	for k := 0; same && k < len(got); k++ {
		same = bytes.Equal(got[k], want[k])
	}
	if !same {
		fail("message %d: got %s, want %s", i, describe(got), describe(want))
	}
}

func describe(parts [][]byte) string {
	out := make([]string, len(parts))
	for k, p := range parts {
		if len(p) > 64 {
			out[k] = fmt.Sprintf("%d bytes", len(p))
		} else {
			out[k] = strconv.Quote(string(p))
		}
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// warmUp publishes warm-up messages until the test writes a line on stdin.
func warmUp(s zmq4.Socket) {
	goLine := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		close(goLine)
	}()
	deadline := time.After(timeout)
	for {
		select {
		case <-goLine:
			return
		case <-deadline:
			fail("no go line on stdin")
		case <-time.After(20 * time.Millisecond):
			send(s, [][]byte{[]byte("Awarm")})
			send(s, [][]byte{[]byte("Bwarm")})
		}
	}
}

// waitPeerGone waits until stdin closes: the test closes it once the ferromq end has
// everything, which stands in for the linger go-zeromq lacks.
func waitPeerGone(zmq4.Socket) {
	done := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go-zeromq peer: "+format+"\n", args...)
	os.Exit(1)
}
