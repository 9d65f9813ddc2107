"""What Python programs using pyzmq rely on, run against ferromq's libzmq.so.

Each check runs in a child process with a time limit, so a hang (a lost message, a
zmq_ctx_term that never returns, a recv a signal cannot interrupt) is a failure, not a stuck CI.
Usage: python pyzmq_checks.py            runs every check, prints one line each and a summary
       python pyzmq_checks.py NAME       runs one check in this process
"""

import os
import signal
import subprocess
import sys
import threading
import time

import zmq
import zmq.utils.z85

LIMIT_S = 30


def check_linked_library():
    # pyzmq must have loaded ferromq, not a bundled or system libzmq.
    maps = open("/proc/self/maps").read()
    expected = os.environ["FERROMQ_LIBZMQ"]
    real = os.path.realpath(expected)
    assert real in maps, f"{real} not mapped; pyzmq loaded another libzmq"
    assert zmq.zmq_version_info()[:2] == (4, 3), zmq.zmq_version()


def check_pub_sub_tcp():
    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    sub = ctx.socket(zmq.SUB)
    sub.connect(f"tcp://127.0.0.1:{port}")
    sub.setsockopt(zmq.SUBSCRIBE, b"topic")
    # Publish until the subscription has reached the publisher (the slow-joiner rule).
    deadline = time.monotonic() + 10
    got = None
    while got is None and time.monotonic() < deadline:
        pub.send_multipart([b"other", b"no"])
        pub.send_multipart([b"topic", b"yes"])
        if sub.poll(100):
            got = sub.recv_multipart()
    assert got == [b"topic", b"yes"], got
    ctx.destroy(linger=0)


def check_req_rep_tcp():
    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    port = rep.bind_to_random_port("tcp://127.0.0.1")
    req = ctx.socket(zmq.REQ)
    req.connect(f"tcp://127.0.0.1:{port}")
    for i in range(10):
        req.send_string(f"ping {i}")
        assert rep.recv_string() == f"ping {i}"
        rep.send_string(f"pong {i}")
        assert req.recv_string() == f"pong {i}"
    ctx.destroy(linger=0)


def check_proxy_then_term():
    # The common shutdown: a proxy runs in a thread, the main thread calls ctx.term(),
    # zmq.proxy raises ETERM, the thread closes its sockets, term returns.
    ctx = zmq.Context()
    outcome = []
    ready = threading.Event()
    ports = {}

    def run_proxy():
        front = ctx.socket(zmq.ROUTER)
        back = ctx.socket(zmq.DEALER)
        ports["front"] = front.bind_to_random_port("tcp://127.0.0.1")
        ports["back"] = back.bind_to_random_port("tcp://127.0.0.1")
        ready.set()
        try:
            zmq.proxy(front, back)
            outcome.append("returned")
        except zmq.ZMQError as e:
            outcome.append(e.errno)
        finally:
            front.close(linger=0)
            back.close(linger=0)

    thread = threading.Thread(target=run_proxy, daemon=True)
    thread.start()
    assert ready.wait(10)
    client = ctx.socket(zmq.REQ)
    worker = ctx.socket(zmq.REP)
    client.connect(f"tcp://127.0.0.1:{ports['front']}")
    worker.connect(f"tcp://127.0.0.1:{ports['back']}")
    client.send(b"through the proxy")
    assert worker.poll(10000), "the request never crossed the proxy"
    assert worker.recv() == b"through the proxy"
    worker.send(b"back")
    assert client.poll(10000) and client.recv() == b"back"
    client.close(linger=0)
    worker.close(linger=0)
    ctx.term()
    thread.join(10)
    assert not thread.is_alive(), "zmq.proxy did not return after ctx.term()"
    assert outcome == [zmq.ETERM], outcome


class Alarm(Exception):
    pass


def check_sigalrm_interrupts_recv():
    def on_alarm(signum, frame):
        raise Alarm()

    signal.signal(signal.SIGALRM, on_alarm)
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.bind("inproc://nobody-sends")
    start = time.monotonic()
    signal.alarm(1)
    try:
        pull.recv()
        raise AssertionError("recv returned without a message")
    except Alarm:
        pass
    elapsed = time.monotonic() - start
    assert elapsed < 5, f"interrupted only after {elapsed:.1f}s"
    pull.close(linger=0)
    ctx.term()


def check_curve_with_zap_handler():
    # pyzmq's CURVE API on ferromq: keys from zmq.curve_keypair (Z85), the key options as
    # pyzmq sets them (bytes properties), a ZAP handler thread, and User-Id on the message.
    assert zmq.has("curve")
    server_public, server_secret = zmq.curve_keypair()
    client_public, client_secret = zmq.curve_keypair()
    assert zmq.curve_public(server_secret) == server_public
    ctx = zmq.Context()
    handler = ctx.socket(zmq.REP)
    handler.bind("inproc://zeromq.zap.01")

    def answer():
        version, request_id, domain, address, identity, mechanism, key = handler.recv_multipart()
        ok = mechanism == b"CURVE" and key == zmq.utils.z85.decode(client_public)
        handler.send_multipart(
            [b"1.0", request_id, b"200" if ok else b"400", b"", b"bob" if ok else b"", b""]
        )

    thread = threading.Thread(target=answer)
    thread.start()
    server = ctx.socket(zmq.ROUTER)
    server.curve_server = True
    server.curve_secretkey = server_secret
    port = server.bind_to_random_port("tcp://127.0.0.1")
    client = ctx.socket(zmq.DEALER)
    client.curve_serverkey = server_public
    client.curve_publickey = client_public
    client.curve_secretkey = client_secret
    assert client.getsockopt(zmq.MECHANISM) == zmq.CURVE
    client.connect(f"tcp://127.0.0.1:{port}")
    client.send(b"secret hello")
    assert server.poll(10000), "nothing arrived"
    frames = server.recv_multipart(copy=False)
    assert frames[1].bytes == b"secret hello"
    assert frames[1].get("User-Id") == "bob", frames[1].get("User-Id")
    thread.join()
    ctx.destroy(linger=0)


CHECKS = {
    name[len("check_"):]: fn
    for name, fn in list(globals().items())
    if name.startswith("check_") and callable(fn)
}


def run_all():
    passed = failed = 0
    for name in CHECKS:
        start = time.monotonic()
        try:
            proc = subprocess.run(
                [sys.executable, __file__, name],
                capture_output=True,
                text=True,
                timeout=LIMIT_S,
            )
            ok = proc.returncode == 0
            detail = (proc.stdout + proc.stderr).strip()
        except subprocess.TimeoutExpired:
            ok = False
            detail = f"hung: no result within {LIMIT_S}s"
        took = time.monotonic() - start
        if ok:
            passed += 1
            print(f"PASS {name} ({took:.1f}s)")
        else:
            failed += 1
            print(f"FAIL {name} ({took:.1f}s)")
            for line in detail.splitlines()[-15:]:
                print(f"    {line}")
    print(f"pyzmq: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 2:
        CHECKS[sys.argv[1]]()
        sys.exit(0)
    sys.exit(run_all())
