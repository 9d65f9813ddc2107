/* Throughput, receiving side: a PULL socket binds, receives message-count messages of
   message-size bytes and prints the rate. The interface and output of libzmq's perf/local_thr,
   so figures line up with libzmq's own tool; built against ferromq and against libzmq by
   ffi/perf/compare.sh (and smoke-tested by tests/tests/c_perf.rs). */
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

int main (int argc, char *argv[])
{
    if (argc != 4) {
        printf ("usage: local_thr <bind-to> <message-size> <message-count>\n");
        return 1;
    }
    const char *bind_to = argv[1];
    size_t message_size = (size_t) atoi (argv[2]);
    int message_count = atoi (argv[3]);
    if (message_count < 1) {
        printf ("message-count must be at least 1\n");
        return 1;
    }

    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PULL);
    if (!s || zmq_bind (s, bind_to) != 0) {
        printf ("error in zmq_socket/zmq_bind: %s\n", zmq_strerror (zmq_errno ()));
        return -1;
    }
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    /* The clock starts at the first message, as in libzmq's tool. */
    if (zmq_recvmsg (s, &msg, 0) < 0 || zmq_msg_size (&msg) != message_size) {
        printf ("message of incorrect size received\n");
        return -1;
    }
    void *watch = zmq_stopwatch_start ();
    for (int i = 1; i != message_count; i++) {
        if (zmq_recvmsg (s, &msg, 0) < 0) {
            printf ("error in zmq_recvmsg: %s\n", zmq_strerror (zmq_errno ()));
            return -1;
        }
        if (zmq_msg_size (&msg) != message_size) {
            printf ("message of incorrect size received\n");
            return -1;
        }
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    if (elapsed == 0)
        elapsed = 1;
    zmq_msg_close (&msg);

    double throughput = (double) message_count / (double) elapsed * 1000000;
    double megabits = throughput * (double) message_size * 8 / 1000000;
    printf ("message size: %d [B]\n", (int) message_size);
    printf ("message count: %d\n", message_count);
    printf ("mean throughput: %d [msg/s]\n", (int) throughput);
    printf ("mean throughput: %.3f [Mb/s]\n", megabits);

    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
