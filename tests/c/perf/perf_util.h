/* What the perf programs of this folder share: failing loudly with libzmq's error text, and a
   monotonic clock. Define PERF_NAME (the program's name, for messages) and _POSIX_C_SOURCE
   before including. */
#ifndef FERROMQ_PERF_UTIL_H
#define FERROMQ_PERF_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zmq.h>

static inline void die (const char *what)
{
    fprintf (stderr, PERF_NAME ": %s: %s\n", what, zmq_strerror (zmq_errno ()));
    exit (1);
}

/* A zmq_* call that returns -1 on failure, which ends the program. */
#define CHECK(call)                                                                           \
    do {                                                                                      \
        if ((call) < 0)                                                                       \
            die (#call);                                                                      \
    } while (0)

static inline double now_ns (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec * 1e9 + (double) t.tv_nsec;
}

#endif
