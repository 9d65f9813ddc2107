/* What the one-process tools of this folder (poll_thr, poll_lat, send_thr) share: their
   arguments (<endpoint> <message-size> <count>), opening each end, and the throughput report
   in libzmq's words. Each stays a program of its own with libzmq's perf interface. */
#ifndef FERROMQ_ONE_PROCESS_H
#define FERROMQ_ONE_PROCESS_H

#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

static const char *endpoint;
static size_t message_size;
static int message_count;

/* Reads <endpoint> <message-size> <count>; prints `usage`, or that the count (named
   `count_name`) must be at least `least`, and exits when the arguments say otherwise. */
static inline void read_args (int argc, char *argv[], const char *usage, const char *count_name,
                              int least)
{
    if (argc != 4) {
        printf ("usage: %s\n", usage);
        exit (1);
    }
    endpoint = argv[1];
    message_size = (size_t) atoi (argv[2]);
    message_count = atoi (argv[3]);
    if (message_count < least) {
        printf ("%s must be at least %d\n", count_name, least);
        exit (1);
    }
}

/* A socket of `type` bound to `endpoint` (`bind` non-zero) or connected to it; exits with
   libzmq's error text when either fails. */
static inline void *open_end (void *ctx, int type, int bind)
{
    void *s = zmq_socket (ctx, type);
    if (!s || (bind ? zmq_bind (s, endpoint) : zmq_connect (s, endpoint)) != 0) {
        printf ("error in zmq_socket/%s: %s\n", bind ? "zmq_bind" : "zmq_connect",
                zmq_strerror (zmq_errno ()));
        exit (1);
    }
    return s;
}

/* The report of a throughput run timed from its first message on. */
static inline void print_throughput (unsigned long elapsed)
{
    if (elapsed == 0)
        elapsed = 1;
    printf ("message size: %d [B]\n", (int) message_size);
    printf ("message count: %d\n", message_count);
    printf ("mean throughput: %d [msg/s]\n",
            (int) ((double) (message_count - 1) * 1000000 / elapsed));
}

#endif
