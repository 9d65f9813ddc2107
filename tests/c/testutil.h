/* Shared by the socket C tests: a CHECK macro that counts failures instead of aborting, so one
   run reports every broken expectation, and small helpers every test needs. Works against
   ferromq's zmq.h and libzmq's alike. */
#ifndef FERROMQ_TESTUTIL_H
#define FERROMQ_TESTUTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

static int failures = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf (stderr, "%s:%d: check failed: %s (errno %d: %s)\n",       \
                     __FILE__, __LINE__, #cond, zmq_errno (),                  \
                     zmq_strerror (zmq_errno ()));                             \
            failures++;                                                        \
        }                                                                      \
    } while (0)

/* A call that must fail with a given errno. */
#define CHECK_ERR(call, expected)                                              \
    do {                                                                       \
        errno = 0;                                                             \
        int rc_ = (int) (call);                                                \
        int en_ = zmq_errno ();                                                \
        if (rc_ != -1 || en_ != (expected)) {                                  \
            fprintf (stderr,                                                   \
                     "%s:%d: %s: expected -1/%s, got %d/%d (%s)\n",            \
                     __FILE__, __LINE__, #call, #expected, rc_, en_,           \
                     zmq_strerror (en_));                                      \
            failures++;                                                        \
        }                                                                      \
    } while (0)

/* The end of main: "ok" on stdout and 0, or the count of failed checks on stderr and 1. */
static inline int report (void)
{
    if (failures) {
        fprintf (stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf ("ok\n");
    return 0;
}

/* Bounded blocking: no test may hang on a lost message. */
static inline void set_timeouts (void *s, int ms)
{
    zmq_setsockopt (s, ZMQ_RCVTIMEO, &ms, sizeof ms);
    zmq_setsockopt (s, ZMQ_SNDTIMEO, &ms, sizeof ms);
    int linger = 0;
    zmq_setsockopt (s, ZMQ_LINGER, &linger, sizeof linger);
}

/* Binds to `endpoint` and writes the resolved endpoint (tcp port chosen by the OS) to `out`. */
static inline int bind_resolved (void *s, const char *endpoint, char *out,
                                 size_t out_size)
{
    if (zmq_bind (s, endpoint) != 0)
        return -1;
    size_t len = out_size;
    return zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, out, &len);
}

static inline int send_str (void *s, const char *text, int flags)
{
    return zmq_send (s, text, strlen (text), flags);
}

/* Receives one frame as a NUL-terminated string into `buf`; returns its size or -1. */
static inline int recv_str (void *s, char *buf, size_t size, int flags)
{
    int n = zmq_recv (s, buf, size - 1, flags);
    if (n >= 0)
        buf[(size_t) n < size - 1 ? (size_t) n : size - 1] = '\0';
    return n;
}

static inline int rcvmore (void *s)
{
    int more = 0;
    size_t len = sizeof more;
    zmq_getsockopt (s, ZMQ_RCVMORE, &more, &len);
    return more;
}

/* Reads one monitor event, libzmq's two frames: returns its number, with its value in *value
   and its endpoint in `endpoint` (NUL-terminated; NULL when not wanted), or -1 when none came
   within the monitor socket's RCVTIMEO. */
static inline int read_event (void *mon, uint32_t *value, char *endpoint, size_t size)
{
    char scratch[256];
    if (!endpoint) {
        endpoint = scratch;
        size = sizeof scratch;
    }
    endpoint[0] = '\0';
    unsigned char head[16];
    int n = zmq_recv (mon, head, sizeof head, 0);
    if (n < 0)
        return -1;
    CHECK (n == 6);
    CHECK (rcvmore (mon));
    uint16_t event;
    memcpy (&event, head, 2);
    memcpy (value, head + 2, 4);
    CHECK (recv_str (mon, endpoint, size, 0) >= 0);
    CHECK (!rcvmore (mon));
    return event;
}

#endif
