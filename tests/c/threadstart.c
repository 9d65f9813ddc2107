/* zmq_threadstart as libzmq: the thread it starts blocks every signal (libzmq's thread_t does
   so to keep signals off its threads), so a process-directed SIGALRM reaches the main thread.
   Prints "ok", or names the failed checks and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>

#include "testutil.h"

static int alarm_blocked = -1;
static int int_blocked = -1;

static void report_mask (void *arg)
{
    (void) arg;
    sigset_t now;
    sigemptyset (&now);
    if (pthread_sigmask (SIG_BLOCK, NULL, &now) == 0) {
        alarm_blocked = sigismember (&now, SIGALRM);
        int_blocked = sigismember (&now, SIGINT);
    }
}

int main (void)
{
    void *thread = zmq_threadstart (report_mask, NULL);
    CHECK (thread != NULL);
    zmq_threadclose (thread);
    CHECK (alarm_blocked == 1);
    CHECK (int_blocked == 1);
    return report ();
}
