/* libzmq's rules for a local tcp address, a bind's and a connect's source (`tcp://src;dst`),
   as zmq_tcp(7) gives them: `*`, a network interface's name (`tcp://eth0:5555`, its first
   address of the socket's family), or a numeric address with an optional IPv6 zone
   (`[fe80::1%eth0]`), and never a DNS lookup; and the first check zmq_unbind and
   zmq_disconnect make on their argument (EINVAL for a string that is not
   `transport://address`, EPROTONOSUPPORT for an unknown transport). Uses the loopback
   interface `lo`. Built by tests/tests/c_bind_local.rs against ferromq and against Debian's
   libzmq 4.3.4, which must both print "ok". */
#include "testutil.h"

/* ZMQ_LAST_ENDPOINT up to its port, `tcp://127.0.0.1:` say. */
static void bound_prefix (void *s, char *out, size_t size)
{
    size_t len = size;
    out[0] = '\0';
    CHECK (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, out, &len) == 0);
    char *colon = strrchr (out, ':');
    if (colon)
        colon[1] = '\0';
}

/* Connects a PUSH to `pull`'s bound endpoint from `source` (`host:port`) and checks that a
   message goes through. */
static void round_trip (void *ctx, void *pull, const char *source, int ipv6)
{
    char bound[256], from[300], buf[16];
    size_t len = sizeof bound;
    CHECK (zmq_getsockopt (pull, ZMQ_LAST_ENDPOINT, bound, &len) == 0);
    snprintf (from, sizeof from, "tcp://%s;%s", source, bound + strlen ("tcp://"));
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    CHECK (zmq_setsockopt (push, ZMQ_IPV6, &ipv6, sizeof ipv6) == 0);
    set_timeouts (push, 5000);
    set_timeouts (pull, 5000);
    CHECK (zmq_connect (push, from) == 0);
    CHECK (send_str (push, "hi", 0) == 2);
    CHECK (recv_str (pull, buf, sizeof buf, 0) == 2 && strcmp (buf, "hi") == 0);
    zmq_close (push);
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    char prefix[256];

    /* An interface's name: its IPv4 address, and as a connect's source. */
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    CHECK (zmq_bind (pull, "tcp://lo:*") == 0);
    bound_prefix (pull, prefix, sizeof prefix);
    CHECK (strcmp (prefix, "tcp://127.0.0.1:") == 0);
    round_trip (ctx, pull, "lo:0", 0);
    zmq_close (pull);

    /* With ZMQ_IPV6 the same name is its IPv6 address (where lo has one). */
    int one = 1;
    void *pull6 = zmq_socket (ctx, ZMQ_PULL);
    CHECK (zmq_setsockopt (pull6, ZMQ_IPV6, &one, sizeof one) == 0);
    if (zmq_bind (pull6, "tcp://lo:*") == 0) {
        bound_prefix (pull6, prefix, sizeof prefix);
        CHECK (strcmp (prefix, "tcp://[::1]:") == 0);
        round_trip (ctx, pull6, "lo:*", 1);
        /* An IPv6 zone (RFC 4007) by interface name or index; empty, unknown or 0 is EINVAL. */
        void *zoned = zmq_socket (ctx, ZMQ_PULL);
        CHECK (zmq_setsockopt (zoned, ZMQ_IPV6, &one, sizeof one) == 0);
        CHECK (zmq_bind (zoned, "tcp://[::1%lo]:*") == 0);
        bound_prefix (zoned, prefix, sizeof prefix);
        CHECK (strcmp (prefix, "tcp://[::1]:") == 0);
        round_trip (ctx, zoned, "[::1%lo]:0", 1);
        CHECK_ERR (zmq_bind (zoned, "tcp://[::1%]:*"), EINVAL);
        CHECK_ERR (zmq_bind (zoned, "tcp://[::1%0]:*"), EINVAL);
        CHECK_ERR (zmq_bind (zoned, "tcp://[::1%no-such-nic0]:*"), EINVAL);
        zmq_close (zoned);
    } else {
        CHECK (zmq_errno () == ENODEV);
        fprintf (stderr, "skip: lo has no IPv6 address\n");
    }
    zmq_close (pull6);

    /* No DNS for a local address: a host name is no device. */
    void *s = zmq_socket (ctx, ZMQ_PULL);
    CHECK_ERR (zmq_bind (s, "tcp://localhost:*"), ENODEV);
    CHECK_ERR (zmq_bind (s, "tcp://no-such-nic0:*"), ENODEV);
    CHECK_ERR (zmq_bind (s, "tcp://[::1]:*"), ENODEV); /* IPv6 without ZMQ_IPV6 */
    /* A zone on an IPv4 address is read (so it must name an interface) and dropped. */
    CHECK_ERR (zmq_bind (s, "tcp://127.0.0.1%no-such-nic0:*"), EINVAL);
    void *v4zone = zmq_socket (ctx, ZMQ_PULL);
    CHECK (zmq_bind (v4zone, "tcp://127.0.0.1%lo:*") == 0);
    bound_prefix (v4zone, prefix, sizeof prefix);
    CHECK (strcmp (prefix, "tcp://127.0.0.1:") == 0);
    zmq_close (v4zone);

    /* A source part at bind must be a local address with a port; then it is ignored. */
    CHECK_ERR (zmq_bind (s, "tcp://127.0.0.1;127.0.0.1:*"), EINVAL);
    CHECK_ERR (zmq_bind (s, "tcp://localhost:0;127.0.0.1:*"), ENODEV);
    CHECK (zmq_bind (s, "tcp://127.0.0.1:0;127.0.0.1:*") == 0);
    bound_prefix (s, prefix, sizeof prefix);
    CHECK (strcmp (prefix, "tcp://127.0.0.1:") == 0);

    /* unbind and disconnect check the endpoint's form before looking it up. */
    CHECK_ERR (zmq_unbind (s, "no-scheme"), EINVAL);
    CHECK_ERR (zmq_unbind (s, "tcp://"), EINVAL);
    CHECK_ERR (zmq_unbind (s, "://x"), EINVAL);
    CHECK_ERR (zmq_unbind (s, "bogus://x"), EPROTONOSUPPORT);
    CHECK_ERR (zmq_disconnect (s, "no-scheme"), EINVAL);
    CHECK_ERR (zmq_disconnect (s, "bogus://x"), EPROTONOSUPPORT);
    CHECK_ERR (zmq_disconnect (s, "tcp://not-connected:1"), ENOENT);
    zmq_close (s);

    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
