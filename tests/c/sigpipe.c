/* A peer that disconnects must never raise SIGPIPE (issue 13, defect 1). libzmq writes with
   MSG_NOSIGNAL, so a C program with the default SIGPIPE disposition survives a peer that goes
   away while messages are being written to it. This program keeps the default disposition
   (it resets it, in case the parent ignored SIGPIPE), connects raw peers that complete the ZMTP
   handshake as PULL and then close, while a PUSH keeps writing to them over tcp and ipc. Death
   by SIGPIPE shows as a killed process; survival prints "ok". A ROUTER answering peers that
   sent a request and went away checks the same for answers. */
#define _GNU_SOURCE
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms (int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    nanosleep (&ts, NULL);
}

/* A raw ZMTP 3.0 NULL peer: greeting, then READY with Socket-Type `type` (PULL, DEALER). */
static int handshake_as (int fd, const char *type)
{
    unsigned char greeting[64] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0};
    memcpy (greeting + 12, "NULL", 4);
    unsigned char ready[64] = {0x04, 0, 5, 'R', 'E', 'A', 'D', 'Y', 11, 'S', 'o', 'c', 'k',
                               'e', 't', '-', 'T', 'y', 'p', 'e', 0, 0, 0, 0};
    size_t type_len = strlen (type);
    ready[23] = (unsigned char) type_len;
    memcpy (ready + 24, type, type_len);
    ready[1] = (unsigned char) (22 + type_len);
    size_t ready_len = 24 + type_len;
    if (write (fd, greeting, sizeof greeting) != (ssize_t) sizeof greeting)
        return -1;
    if (write (fd, ready, ready_len) != (ssize_t) ready_len)
        return -1;
    /* Read the PUSH's greeting and READY so the connection is fully up. */
    unsigned char buf[256];
    size_t got = 0;
    while (got < 64 + 2) {
        ssize_t n = read (fd, buf, sizeof buf);
        if (n <= 0)
            return -1;
        got += (size_t) n;
    }
    return 0;
}

static int connect_tcp (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset (&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons ((unsigned short) port);
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    if (connect (fd, (struct sockaddr *) &a, sizeof a) != 0) {
        close (fd);
        return -1;
    }
    return fd;
}

static int connect_ipc (const char *path)
{
    int fd = socket (AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset (&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    strncpy (a.sun_path, path, sizeof a.sun_path - 1);
    if (connect (fd, (struct sockaddr *) &a, sizeof a) != 0) {
        close (fd);
        return -1;
    }
    return fd;
}

/* A raw stream to a resolved tcp:// or ipc:// endpoint. */
static int connect_raw (const char *resolved)
{
    if (strncmp (resolved, "tcp://", 6) == 0)
        return connect_tcp (atoi (strrchr (resolved, ':') + 1));
    return connect_ipc (resolved + 6);
}

/* Connects a raw peer, lets the PUSH write to it, closes it mid-stream, keeps writing. */
static void writer_outlives_peer (void *ctx, const char *endpoint)
{
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    int linger = 0;
    zmq_setsockopt (push, ZMQ_LINGER, &linger, sizeof linger);
    char resolved[256];
    CHECK (bind_resolved (push, endpoint, resolved, sizeof resolved) == 0);

    static char body[65536];
    for (int round = 0; round < 4; round++) {
        int fd = connect_raw (resolved);
        CHECK (fd >= 0);
        if (fd < 0)
            break;
        CHECK (handshake_as (fd, "PULL") == 0);
        /* Half of the rounds the peer closes before anything is queued, half while the PUSH
           is filling its socket buffer; either way the next writes meet a dead peer. */
        if (round % 2 == 1) {
            for (int i = 0; i < 64; i++)
                zmq_send (push, body, sizeof body, ZMQ_DONTWAIT);
            sleep_ms (20);
        }
        close (fd);
        for (int i = 0; i < 200; i++) {
            zmq_send (push, body, 1024, ZMQ_DONTWAIT);
            if (i % 20 == 0)
                sleep_ms (2);
        }
        sleep_ms (50);
    }
    /* A peer that stops reading but keeps its end open: over ipc every later write fails with
       EPIPE while the connection still looks alive to the reader side, so the PUSH's next
       write is what meets the dead direction (the path a plain writev turns into SIGPIPE). */
    {
        int fd = connect_raw (resolved);
        CHECK (fd >= 0);
        if (fd >= 0) {
            CHECK (handshake_as (fd, "PULL") == 0);
            shutdown (fd, SHUT_RD);
            for (int i = 0; i < 200; i++) {
                zmq_send (push, body, 1024, ZMQ_DONTWAIT);
                if (i % 20 == 0)
                    sleep_ms (2);
            }
            sleep_ms (100);
            close (fd);
        }
    }
    /* A peer that closes right after connecting, during the handshake. */
    for (int round = 0; round < 4; round++) {
        int fd = connect_raw (resolved);
        if (fd >= 0)
            close (fd);
        sleep_ms (20);
    }
    zmq_close (push);
}

/* A peer that sends a request and then goes away while it is answered: the answer is the
   write that meets the dead peer (ferromq writes an answer from the sending thread, not its
   I/O thread, whose signals are blocked). Over ipc the peer stops reading but keeps its end
   open, so the answer's write fails with EPIPE for certain; over tcp it closes, so a write
   meets its reset. */
static void answer_outlives_peer (void *ctx, const char *endpoint)
{
    void *router = zmq_socket (ctx, ZMQ_ROUTER);
    int linger = 0;
    zmq_setsockopt (router, ZMQ_LINGER, &linger, sizeof linger);
    int timeout = 5000;
    zmq_setsockopt (router, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    char resolved[256];
    CHECK (bind_resolved (router, endpoint, resolved, sizeof resolved) == 0);
    static const unsigned char request[] = {0x00, 5, 'h', 'e', 'l', 'l', 'o'};
    static char reply[65536];
    for (int round = 0; round < 8; round++) {
        int fd = connect_raw (resolved);
        CHECK (fd >= 0);
        if (fd < 0)
            break;
        CHECK (handshake_as (fd, "DEALER") == 0);
        CHECK (write (fd, request, sizeof request) == (ssize_t) sizeof request);
        char id[256];
        char body[16];
        int id_len = zmq_recv (router, id, sizeof id, 0);
        CHECK (id_len > 0);
        CHECK (zmq_recv (router, body, sizeof body, 0) == 5);
        if (strncmp (resolved, "ipc://", 6) == 0)
            shutdown (fd, SHUT_RD);
        else
            close (fd);
        /* Small and large answers, the later ones after the first has met the dead peer. */
        for (int i = 0; i < 4 && id_len > 0; i++) {
            zmq_send (router, id, (size_t) id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT);
            zmq_send (router, reply, i % 2 ? sizeof reply : 16, ZMQ_DONTWAIT);
            sleep_ms (2);
        }
        if (strncmp (resolved, "ipc://", 6) == 0)
            close (fd);
        sleep_ms (10);
    }
    zmq_close (router);
}

int main (void)
{
    signal (SIGPIPE, SIG_DFL);
    void *ctx = zmq_ctx_new ();
    writer_outlives_peer (ctx, "tcp://127.0.0.1:*");
    char ipc[128];
    snprintf (ipc, sizeof ipc, "ipc:///tmp/ferromq-sigpipe-%d.ipc", (int) getpid ());
    writer_outlives_peer (ctx, ipc);
    answer_outlives_peer (ctx, "tcp://127.0.0.1:*");
    answer_outlives_peer (ctx, ipc);
    zmq_ctx_term (ctx);
    return report ();
}
