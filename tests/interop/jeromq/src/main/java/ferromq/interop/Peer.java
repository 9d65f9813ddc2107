package ferromq.interop;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * One end of a ferromq interop exchange, driven by tests/tests/foreign_peers.rs.
 *
 * <p>Usage: {@code Peer ROLE TYPE bind|connect ENDPOINT COUNT [options]}. Roles: {@code send}
 * (COUNT numbered messages), {@code recv} (expects them, in order), {@code echo} (receives each
 * and sends it back), {@code req} (sends each and expects it back). Message i is three frames:
 * a topic ("A" + i for even i, "B" + i for odd), an empty frame, and a body ("body-" + i, or
 * 1 MiB of 'z' for i == 2). A SUB subscribes to "A", so it expects the even messages only. A
 * PUB publishes single-frame "Awarm"/"Bwarm" messages until a line arrives on stdin (the
 * ferromq SUB writes it once a warm-up message got through), so nothing is lost to the
 * subscription's propagation delay; an XPUB waits for the subscription ("\x01A") instead. When binding, the first stdout line is "ENDPOINT " + the
 * bound endpoint. Exit 0 only when everything expected arrived; 1 on a mismatch or timeout.
 *
 * <p>Options: --id ID (own routing id), --peer-id ID (the routing id a ROUTER must see),
 * --plain-server USER:PASS (PLAIN server with a ZAP handler that accepts only these),
 * --plain-client USER:PASS, --curve-server SECRET (z85), --curve-client SERVERPUB,PUB,SECRET
 * (z85), --heartbeat IVL_MS (ZMQ_HEARTBEAT_IVL, timeout 3 x IVL), --pause MS (sleep before
 * each echo reply, to let heartbeats run).
 */
public final class Peer {
    private static final int TIMEOUT_MS = 10_000;
    private static final int MIB = 1 << 20;
    private static final int HANDSHAKE_IVL_MS = 1_500;

    private Peer() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: Peer ROLE TYPE bind|connect ENDPOINT COUNT [options]");
            System.exit(2);
        }
        String role = args[0];
        String type = args[1];
        boolean bind = args[2].equals("bind");
        String endpoint = args[3];
        int count = Integer.parseInt(args[4]);
        String id = null;
        String peerId = null;
        String plainServer = null;
        String plainClient = null;
        String curveServer = null;
        String curveClient = null;
        int heartbeat = 0;
        int pause = 0;
        for (int i = 5; i < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--id" -> id = v;
                case "--peer-id" -> peerId = v;
                case "--plain-server" -> plainServer = v;
                case "--plain-client" -> plainClient = v;
                case "--curve-server" -> curveServer = v;
                case "--curve-client" -> curveClient = v;
                case "--heartbeat" -> heartbeat = Integer.parseInt(v);
                case "--pause" -> pause = Integer.parseInt(v);
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }

        ZMQ.Context ctx = ZMQ.context(1);
        Thread zap = null;
        if (plainServer != null) {
            zap = startZap(ctx, plainServer);
        }
        ZMQ.Socket s = ctx.socket(SocketType.valueOf(type.toUpperCase()));
        s.setReceiveTimeOut(TIMEOUT_MS);
        s.setSendTimeOut(TIMEOUT_MS);
        s.setLinger(TIMEOUT_MS);
        if (id != null) {
            s.setIdentity(id.getBytes(StandardCharsets.UTF_8));
        }
        if (plainServer != null) {
            s.setZAPDomain("test");
            s.setPlainServer(true);
        }
        if (plainClient != null) {
            String[] up = plainClient.split(":", 2);
            s.setPlainUsername(up[0]);
            s.setPlainPassword(up[1]);
        }
        if (curveServer != null) {
            s.setCurveServer(true);
            s.setCurveSecretKey(ZMQ.Curve.z85Decode(curveServer));
        }
        if (curveClient != null) {
            String[] k = curveClient.split(",", 3);
            s.setCurveServerKey(ZMQ.Curve.z85Decode(k[0]));
            s.setCurvePublicKey(ZMQ.Curve.z85Decode(k[1]));
            s.setCurveSecretKey(ZMQ.Curve.z85Decode(k[2]));
        }
        if (heartbeat > 0) {
            s.setHeartbeatIvl(heartbeat);
            s.setHeartbeatTimeout(3 * heartbeat);
        }
        if (type.equalsIgnoreCase("sub")) {
            s.subscribe("A");
        }
        if (bind) {
            check(s.bind(endpoint), "bind " + endpoint);
            System.out.println("ENDPOINT " + s.getLastEndpoint());
            System.out.flush();
        } else {
            connect(ctx, s, endpoint);
        }

        boolean router = type.equalsIgnoreCase("router");
        switch (role) {
            case "send" -> {
                if (type.equalsIgnoreCase("pub")) {
                    warmUp(s);
                }
                if (type.equalsIgnoreCase("xpub")) {
                    List<byte[]> sub = recv(s, "the subscription");
                    if (sub.size() != 1 || !Arrays.equals(sub.get(0), new byte[] {1, 'A'})) {
                        fail("XPUB got " + describe(sub) + ", want [\"\\x01A\"]");
                    }
                }
                for (int i = 0; i < count; i++) {
                    send(s, message(i));
                }
            }
            case "recv" -> {
                boolean sub = type.equalsIgnoreCase("sub");
                for (int i = 0; i < count; i++) {
                    if (sub && i % 2 == 1) {
                        continue;
                    }
                    List<byte[]> got = recv(s, "message " + i);
                    if (router) {
                        expectId(got, peerId);
                        got = got.subList(1, got.size());
                    }
                    expect(got, message(i), i);
                }
            }
            case "echo" -> {
                for (int i = 0; i < count; i++) {
                    List<byte[]> got = recv(s, "message " + i);
                    List<byte[]> body = got;
                    if (router) {
                        expectId(got, peerId);
                        body = got.subList(1, got.size());
                    }
                    expect(body, message(i), i);
                    if (pause > 0) {
                        Thread.sleep(pause);
                    }
                    send(s, got);
                }
            }
            case "req" -> {
                for (int i = 0; i < count; i++) {
                    send(s, message(i));
                    expect(recv(s, "reply " + i), message(i), i);
                }
            }
            default -> fail("unknown role " + role);
        }
        s.close();
        ctx.term();
        if (zap != null) {
            zap.join(TIMEOUT_MS);
        }
        System.exit(0);
    }

    /**
     * Connects and waits for the ZMTP handshake. JeroMQ 0.6.0's connecting side now and then
     * reads its peer's signature, queues its own greeting and then neither writes it nor reads
     * again (libzmq 4.3.4 as the peer sees it too). Its own HANDSHAKE_IVL, shortened to
     * {@link #HANDSHAKE_IVL_MS}, is what gets it out: the stalled connection is dropped and the
     * session connects again. A handshake that took more than one connection is reported on
     * stderr with the socket's events.
     */
    static void connect(ZMQ.Context ctx, ZMQ.Socket s, String endpoint) {
        String mon = "inproc://peer-connect-monitor";
        check(s.setHandshakeIvl(HANDSHAKE_IVL_MS), "handshake ivl");
        check(s.monitor(mon, ZMQ.EVENT_ALL), "monitor");
        ZMQ.Socket m = ctx.socket(SocketType.PAIR);
        check(m.connect(mon), "connect monitor");
        m.setReceiveTimeOut(100);
        check(s.connect(endpoint), "connect " + endpoint);
        List<Integer> seen = new ArrayList<>();
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        boolean done = false;
        while (!done) {
            if (System.currentTimeMillis() > deadline) {
                fail("no handshake within " + TIMEOUT_MS + " ms; events " + seen);
            }
            ZMQ.Event e = ZMQ.Event.recv(m);
            if (e != null) {
                seen.add(e.getEvent());
                done = e.getEvent() == ZMQ.EVENT_HANDSHAKE_PROTOCOL;
            }
        }
        if (seen.stream().filter(e -> e == ZMQ.EVENT_CONNECTED).count() > 1) {
            System.err.println("jeromq peer: handshake after more than one connection (events " + seen + ")");
        }
        check(s.monitor(null, 0), "stop monitor");
        m.close();
    }

    static List<byte[]> message(int i) {
        byte[] topic = ((i % 2 == 0 ? "A" : "B") + i).getBytes(StandardCharsets.UTF_8);
        byte[] body;
        if (i == 2) {
            body = new byte[MIB];
            Arrays.fill(body, (byte) 'z');
        } else {
            body = ("body-" + i).getBytes(StandardCharsets.UTF_8);
        }
        return List.of(topic, new byte[0], body);
    }

    static void send(ZMQ.Socket s, List<byte[]> parts) {
        for (int k = 0; k < parts.size(); k++) {
            boolean more = k + 1 < parts.size();
            check(s.send(parts.get(k), more ? ZMQ.SNDMORE : 0), "send");
        }
    }

    static List<byte[]> recv(ZMQ.Socket s, String what) {
        List<byte[]> parts = new ArrayList<>();
        do {
            byte[] p = s.recv(0);
            if (p == null) {
                fail("timed out waiting for " + what);
            }
            parts.add(p);
        } while (s.hasReceiveMore());
        return parts;
    }

    static void expect(List<byte[]> got, List<byte[]> want, int i) {
        boolean same = got.size() == want.size();
        for (int k = 0; same && k < got.size(); k++) {
            same = Arrays.equals(got.get(k), want.get(k));
        }
        if (!same) {
            fail("message " + i + ": got " + describe(got) + ", want " + describe(want));
        }
    }

    static void expectId(List<byte[]> got, String peerId) {
        if (peerId != null && !Arrays.equals(got.get(0), peerId.getBytes(StandardCharsets.UTF_8))) {
            fail("routing id " + describe(got.subList(0, 1)) + ", want " + peerId);
        }
    }

    static String describe(List<byte[]> parts) {
        StringBuilder b = new StringBuilder("[");
        for (byte[] p : parts) {
            if (b.length() > 1) {
                b.append(", ");
            }
            if (p.length > 64) {
                b.append(p.length).append(" bytes");
            } else {
                b.append('"').append(new String(p, StandardCharsets.UTF_8)).append('"');
            }
        }
        return b.append(']').toString();
    }

    /** Publishes warm-up messages until the test writes a line on stdin. */
    static void warmUp(ZMQ.Socket s) throws Exception {
        AtomicBoolean go = new AtomicBoolean(false);
        Thread reader = new Thread(() -> {
            try {
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            } catch (Exception e) {
                // A closed stdin ends the warm-up too; the receiver then reports what it missed.
            }
            go.set(true);
        });
        reader.setDaemon(true);
        reader.start();
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        while (!go.get()) {
            if (System.currentTimeMillis() > deadline) {
                fail("no go line on stdin");
            }
            check(s.send("Awarm"), "send warm-up");
            check(s.send("Bwarm"), "send warm-up");
            Thread.sleep(20);
        }
    }

    /** A ZAP handler (RFC 27) on inproc://zeromq.zap.01 accepting only the given PLAIN user. */
    static Thread startZap(ZMQ.Context ctx, String userPass) {
        String[] up = userPass.split(":", 2);
        ZMQ.Socket handler = ctx.socket(SocketType.REP);
        check(handler.bind("inproc://zeromq.zap.01"), "bind zap");
        Thread t = new Thread(() -> {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    List<byte[]> req;
                    try {
                        req = new ArrayList<>();
                        do {
                            byte[] p = handler.recv(0);
                            if (p == null) {
                                return;
                            }
                            req.add(p);
                        } while (handler.hasReceiveMore());
                    } catch (Exception e) {
                        return;
                    }
                    // version, request id, domain, address, identity, mechanism, credentials
                    String mech = req.size() > 5 ? new String(req.get(5), StandardCharsets.UTF_8) : "";
                    boolean ok = mech.equals("PLAIN") && req.size() == 8
                            && new String(req.get(6), StandardCharsets.UTF_8).equals(up[0])
                            && new String(req.get(7), StandardCharsets.UTF_8).equals(up[1]);
                    handler.sendMore("1.0");
                    handler.sendMore(req.size() > 1 ? req.get(1) : new byte[0]);
                    handler.sendMore(ok ? "200" : "400");
                    handler.sendMore(ok ? "OK" : "bad credentials");
                    handler.sendMore(ok ? up[0] : "");
                    handler.send(new byte[0]);
                }
            } finally {
                handler.close();
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            fail(what + " failed");
        }
    }

    static void fail(String why) {
        System.err.println("jeromq peer: " + why);
        System.out.flush();
        System.exit(1);
    }
}
