/* ZMQ_TOS, ZMQ_TCP_MAXRT and ZMQ_BINDTODEVICE as libzmq 4.3 applies them on Linux, observed
   from outside the library: the program finds its own tcp sockets (/proc/self/fd, picked by
   getsockname/getpeername against the bound port) and reads IP_TOS, TCP_USER_TIMEOUT and
   SO_BINDTODEVICE on each.
   - The listening socket gets the binder's TOS and device (libzmq's tcp_open_socket), the
     accepted connection inherits them, the connecting socket gets the connecter's.
   - TCP_MAXRT becomes TCP_USER_TIMEOUT on the established connections (accepted and
     connected), never on the listener; unset options leave the OS defaults.
   - An unknown device fails zmq_bind with ENODEV; zmq_connect succeeds and the attempt is
     retried (the first monitor event is CONNECT_RETRIED: the socket that could not be set up
     is closed without CLOSED, as libzmq's tcp_open_socket does).
   The device checks need CAP_NET_RAW (root): without it, or with "--no-device" (a libzmq
   built without ZMQ_HAVE_SO_BINDTODEVICE), they are skipped with a note on stderr.
   Prints "ok", or names the failed checks and exits 1. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"

struct fds
{
    int listener, accepted, connected;
};

static int port_of (const char *endpoint)
{
    return atoi (strrchr (endpoint, ':') + 1);
}

/* The listening, accepted and connecting tcp sockets of the connection to `port`. */
static struct fds find_fds (int port)
{
    struct fds found = {-1, -1, -1};
    DIR *dir = opendir ("/proc/self/fd");
    CHECK (dir != NULL);
    if (!dir)
        return found;
    struct dirent *entry;
    while ((entry = readdir (dir)) != NULL) {
        int fd = atoi (entry->d_name);
        struct sockaddr_in local, peer;
        socklen_t len = sizeof local;
        if (entry->d_name[0] == '.' || fd == dirfd (dir)
            || getsockname (fd, (struct sockaddr *) &local, &len) != 0
            || local.sin_family != AF_INET)
            continue;
        len = sizeof peer;
        int connected = getpeername (fd, (struct sockaddr *) &peer, &len) == 0;
        if (ntohs (local.sin_port) == port)
            *(connected ? &found.accepted : &found.listener) = fd;
        else if (connected && ntohs (peer.sin_port) == port)
            found.connected = fd;
    }
    closedir (dir);
    return found;
}

static int int_opt (int fd, int level, int name)
{
    int value = -1;
    socklen_t len = sizeof value;
    CHECK (getsockopt (fd, level, name, &value, &len) == 0);
    return value;
}

static int device_is (int fd, const char *expected)
{
    char name[IFNAMSIZ + 1] = "";
    socklen_t len = IFNAMSIZ;
    if (getsockopt (fd, SOL_SOCKET, SO_BINDTODEVICE, name, &len) != 0)
        return 0;
    name[len] = '\0';
    return strcmp (name, expected) == 0;
}

struct side
{
    int tos, maxrt;
    const char *device; /* NULL: not set */
};

static void set_side (void *s, struct side o)
{
    if (o.tos)
        CHECK (zmq_setsockopt (s, ZMQ_TOS, &o.tos, sizeof o.tos) == 0);
    if (o.maxrt)
        CHECK (zmq_setsockopt (s, ZMQ_TCP_MAXRT, &o.maxrt, sizeof o.maxrt) == 0);
    if (o.device)
        CHECK (zmq_setsockopt (s, ZMQ_BINDTODEVICE, o.device, strlen (o.device))
               == 0);
}

/* One connection between a binder and a connecter with these options; checks each socket. */
static void check_connection (void *ctx, struct side bound, struct side connecting)
{
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    set_timeouts (pull, 5000);
    set_timeouts (push, 5000);
    set_side (pull, bound);
    set_side (push, connecting);
    char ep[256];
    CHECK (bind_resolved (pull, "tcp://127.0.0.1:*", ep, sizeof ep) == 0);
    CHECK (zmq_connect (push, ep) == 0);
    char buf[8];
    CHECK (send_str (push, "x", 0) == 1);
    CHECK (recv_str (pull, buf, sizeof buf, 0) == 1);
    struct fds f = find_fds (port_of (ep));
    CHECK (f.listener >= 0 && f.accepted >= 0 && f.connected >= 0);
    if (f.listener >= 0 && f.accepted >= 0 && f.connected >= 0) {
        CHECK (int_opt (f.listener, IPPROTO_IP, IP_TOS) == bound.tos);
        CHECK (int_opt (f.accepted, IPPROTO_IP, IP_TOS) == bound.tos);
        CHECK (int_opt (f.connected, IPPROTO_IP, IP_TOS) == connecting.tos);
        CHECK (int_opt (f.listener, IPPROTO_TCP, TCP_USER_TIMEOUT) == 0);
        CHECK (int_opt (f.accepted, IPPROTO_TCP, TCP_USER_TIMEOUT) == bound.maxrt);
        CHECK (int_opt (f.connected, IPPROTO_TCP, TCP_USER_TIMEOUT)
               == connecting.maxrt);
        const char *b = bound.device ? bound.device : "";
        const char *c = connecting.device ? connecting.device : "";
        CHECK (device_is (f.listener, b));
        CHECK (device_is (f.accepted, b));
        CHECK (device_is (f.connected, c));
    }
    zmq_close (push);
    zmq_close (pull);
}

/* An unknown device: the bind fails with ENODEV, the connect is accepted and retried. */
static void check_unknown_device (void *ctx)
{
    const char *device = "nosuchdev0";
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    set_timeouts (pull, 0);
    CHECK (zmq_setsockopt (pull, ZMQ_BINDTODEVICE, device, strlen (device)) == 0);
    CHECK_ERR (zmq_bind (pull, "tcp://127.0.0.1:*"), ENODEV);

    void *push = zmq_socket (ctx, ZMQ_PUSH);
    set_timeouts (push, 0);
    int ivl = 50;
    CHECK (zmq_setsockopt (push, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) == 0);
    CHECK (zmq_setsockopt (push, ZMQ_BINDTODEVICE, device, strlen (device)) == 0);
    CHECK (zmq_socket_monitor (push, "inproc://tcp-tuning-mon", ZMQ_EVENT_ALL)
           == 0);
    void *mon = zmq_socket (ctx, ZMQ_PAIR);
    set_timeouts (mon, 10000);
    CHECK (zmq_connect (mon, "inproc://tcp-tuning-mon") == 0);
    CHECK (zmq_connect (push, "tcp://127.0.0.1:5555") == 0);
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    CHECK (zmq_msg_recv (&frame, mon, 0) == 6);
    if (zmq_msg_size (&frame) == 6) {
        unsigned short event;
        memcpy (&event, zmq_msg_data (&frame), sizeof event);
        CHECK (event == ZMQ_EVENT_CONNECT_RETRIED);
    }
    CHECK (zmq_msg_recv (&frame, mon, 0) > 0); /* the endpoint */
    zmq_msg_close (&frame);
    zmq_socket_monitor (push, NULL, 0);
    zmq_close (mon);
    zmq_close (push);
    zmq_close (pull);
}

int main (int argc, char **argv)
{
    int device = geteuid () == 0 && !(argc > 1 && strcmp (argv[1], "--no-device") == 0);
    if (!device)
        fprintf (stderr, "skip: the SO_BINDTODEVICE checks (not root, or --no-device)\n");
    void *ctx = zmq_ctx_new ();
    struct side none = {0, 0, NULL};
    check_connection (ctx, none, none);
    struct side bound = {0x28, 2500, device ? "lo" : NULL};
    struct side connecting = {0x48, 3500, device ? "lo" : NULL};
    check_connection (ctx, bound, connecting);
    check_connection (ctx, none, connecting);
    if (device)
        check_unknown_device (ctx);
    CHECK (zmq_ctx_term (ctx) == 0);
    return report ();
}
