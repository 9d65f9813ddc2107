/* Throughput through zmq_poll, one process: a PUSH on a second thread sends message-count
   messages of message-size bytes (zmq_msg_init_size + zmq_msg_send) over <endpoint>; the PULL
   in the main thread waits in zmq_poll before every zmq_msg_recv, as a CZMQ zpoller or zloop
   reader does, and prints messages per second from the first message on. libzmq has no such
   tool: its perf programs never call zmq_poll. */
#include "one_process.h"

static void sender (void *ctx)
{
    void *s = open_end (ctx, ZMQ_PUSH, 0);
    for (int i = 0; i != message_count; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init_size (&msg, message_size) != 0 || zmq_msg_send (&msg, s, 0) < 0) {
            printf ("error in zmq_msg_init_size/zmq_msg_send: %s\n", zmq_strerror (zmq_errno ()));
            exit (1);
        }
    }
    zmq_close (s);
}

int main (int argc, char *argv[])
{
    read_args (argc, argv, "poll_thr <endpoint> <message-size> <message-count>",
               "message-count", 2);
    void *ctx = zmq_ctx_new ();
    void *s = open_end (ctx, ZMQ_PULL, 1);
    void *thread = zmq_threadstart (sender, ctx);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
    void *watch = NULL;
    for (int i = 0; i != message_count; i++) {
        if (zmq_poll (&item, 1, -1) != 1 || zmq_msg_recv (&msg, s, ZMQ_DONTWAIT) < 0
            || zmq_msg_size (&msg) != message_size) {
            printf ("error in zmq_poll/zmq_msg_recv or message of incorrect size\n");
            return 1;
        }
        if (i == 0)
            watch = zmq_stopwatch_start ();
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_msg_close (&msg);
    zmq_threadclose (thread);
    print_throughput (elapsed);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
