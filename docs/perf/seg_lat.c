/* remote_lat (tests/c/perf) printing one figure per SEG round trips (one-way us), to see whether
   a slow run is slow throughout or changes mode within the run (docs/performance.md, "256 KiB
   latency, session 18"). Run against local_lat as remote_lat is:
     cc -O2 -I ffi/include docs/perf/seg_lat.c -o seg_lat -L target/release -lzmq
     taskset -c 0 ./local_lat tcp://127.0.0.1:5555 262144 4000 &
     sleep 0.2; taskset -c 1 ./seg_lat tcp://127.0.0.1:5555 262144 4000 500
   usage: seg_lat <connect-to> <message-size> <roundtrip-count> <segment> */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zmq.h>

static double now_us (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main (int argc, char *argv[])
{
    if (argc != 5) {
        printf ("usage: seg_lat <connect-to> <message-size> <roundtrip-count> <segment>\n");
        return 1;
    }
    size_t size = (size_t) atoi (argv[2]);
    int count = atoi (argv[3]);
    int segment = atoi (argv[4]);
    if (segment < 1) {
        printf ("segment must be at least 1\n");
        return 1;
    }
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_REQ);
    if (!s || zmq_connect (s, argv[1]) != 0) {
        printf ("error in zmq_socket/zmq_connect: %s\n", zmq_strerror (zmq_errno ()));
        return 1;
    }
    zmq_msg_t msg;
    if (zmq_msg_init_size (&msg, size) != 0) {
        printf ("error in zmq_msg_init_size: %s\n", zmq_strerror (zmq_errno ()));
        return 1;
    }
    double start = now_us ();
    for (int i = 1; i <= count; i++) {
        if (zmq_msg_send (&msg, s, 0) < 0 || zmq_msg_recv (&msg, s, 0) < 0) {
            printf ("error in zmq_msg_send/zmq_msg_recv: %s\n", zmq_strerror (zmq_errno ()));
            return 1;
        }
        if (i % segment == 0) {
            double t = now_us ();
            printf ("%.1f ", (t - start) / (2.0 * segment));
            start = t;
        }
    }
    printf ("\n");
    zmq_msg_close (&msg);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
