/* Throughput through zmq_send and zmq_recv, one process: a PUSH on a second thread sends
   message-count messages of message-size bytes from one buffer of its own (zmq_send copies
   it), and the PULL in the main thread receives each into a buffer of its own (zmq_recv),
   printing messages per second from the first message on. Most C programs send this way;
   libzmq's perf programs use zmq_msg_t only. */
#include <string.h>

#include "one_process.h"

static void sender (void *ctx)
{
    void *s = open_end (ctx, ZMQ_PUSH, 0);
    char *buf = malloc (message_size ? message_size : 1);
    if (!buf)
        exit (1);
    memset (buf, 'x', message_size);
    for (int i = 0; i != message_count; i++) {
        if (zmq_send (s, buf, message_size, 0) != (int) message_size) {
            printf ("error in zmq_send: %s\n", zmq_strerror (zmq_errno ()));
            exit (1);
        }
    }
    free (buf);
    zmq_close (s);
}

int main (int argc, char *argv[])
{
    read_args (argc, argv, "send_thr <endpoint> <message-size> <message-count>",
               "message-count", 2);
    void *ctx = zmq_ctx_new ();
    void *s = open_end (ctx, ZMQ_PULL, 1);
    char *buf = malloc (message_size ? message_size : 1);
    if (!buf)
        return 1;
    void *thread = zmq_threadstart (sender, ctx);
    void *watch = NULL;
    for (int i = 0; i != message_count; i++) {
        if (zmq_recv (s, buf, message_size, 0) != (int) message_size
            || (message_size && buf[message_size - 1] != 'x')) {
            printf ("error in zmq_recv or message of incorrect size\n");
            return 1;
        }
        if (i == 0)
            watch = zmq_stopwatch_start ();
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_threadclose (thread);
    print_throughput (elapsed);
    free (buf);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
