/* Throughput over inproc, one process: a PULL socket binds, a second thread connects a PUSH
   socket and sends message-count messages of message-size bytes, each from zmq_msg_init_size
   and never filled. The interface and output of libzmq's perf/inproc_thr, so figures line up
   with libzmq's own tool; built against ferromq and against libzmq by ffi/perf/compare.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

static size_t message_size;
static int message_count;

static void worker (void *ctx)
{
    void *s = zmq_socket (ctx, ZMQ_PUSH);
    if (!s || zmq_connect (s, "inproc://thr_test") != 0) {
        printf ("error in zmq_socket/zmq_connect: %s\n", zmq_strerror (zmq_errno ()));
        exit (1);
    }
    for (int i = 0; i != message_count; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init_size (&msg, message_size) != 0 || zmq_sendmsg (s, &msg, 0) < 0) {
            printf ("error in zmq_sendmsg: %s\n", zmq_strerror (zmq_errno ()));
            exit (1);
        }
        zmq_msg_close (&msg);
    }
    zmq_close (s);
}

int main (int argc, char *argv[])
{
    if (argc != 3) {
        printf ("usage: inproc_thr <message-size> <message-count>\n");
        return 1;
    }
    message_size = (size_t) atoi (argv[1]);
    message_count = atoi (argv[2]);
    if (message_count < 1) {
        printf ("message-count must be at least 1\n");
        return 1;
    }
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PULL);
    if (!s || zmq_bind (s, "inproc://thr_test") != 0) {
        printf ("error in zmq_socket/zmq_bind: %s\n", zmq_strerror (zmq_errno ()));
        return 1;
    }
    void *thread = zmq_threadstart (worker, ctx);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    printf ("message size: %d [B]\n", (int) message_size);
    printf ("message count: %d\n", message_count);
    /* The clock starts at the first message, as in libzmq's tool. */
    if (zmq_recvmsg (s, &msg, 0) < 0 || zmq_msg_size (&msg) != message_size) {
        printf ("message of incorrect size received\n");
        return 1;
    }
    void *watch = zmq_stopwatch_start ();
    for (int i = 1; i != message_count; i++) {
        if (zmq_recvmsg (s, &msg, 0) < 0 || zmq_msg_size (&msg) != message_size) {
            printf ("error in zmq_recvmsg or message of incorrect size\n");
            return 1;
        }
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    if (elapsed == 0)
        elapsed = 1;
    zmq_msg_close (&msg);
    zmq_threadclose (thread);

    double throughput = (double) message_count / (double) elapsed * 1000000;
    double megabits = throughput * (double) message_size * 8 / 1000000;
    printf ("mean throughput: %d [msg/s]\n", (int) throughput);
    printf ("mean throughput: %.3f [Mb/s]\n", megabits);

    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
