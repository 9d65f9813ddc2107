/* The context options for the library's own threads, as libzmq 4.3 applies them on Linux,
   seen from outside: thread names from /proc/self/task/<tid>/comm and CPU affinity from
   sched_getaffinity (<tid>).
   - The I/O thread is named "ZMQbg/IO/0", or "<prefix>/ZMQbg/IO/0" with
     ZMQ_THREAD_NAME_PREFIX (libzmq's ctx.cpp start_thread).
   - ZMQ_THREAD_AFFINITY_CPU_ADD pins it to the CPUs added (here CPU 0); without, it keeps the
     process's affinity.
   Threads start with the context's first socket in libzmq and at the first tcp/ipc bind or
   connect in ferromq, so the program binds before it looks. Scheduling policy and priority are
   not checked: libzmq aborts when the OS refuses them (no CAP_SYS_NICE in a container).
   Prints "ok", or names the failed checks and exits 1. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* The tid of the thread named `name`, or -1. */
static pid_t thread_named_now (const char *name)
{
    pid_t found = -1;
    DIR *dir = opendir ("/proc/self/task");
    CHECK (dir != NULL);
    if (!dir)
        return -1;
    struct dirent *entry;
    while ((entry = readdir (dir)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        char path[300], comm[64] = "";
        snprintf (path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        FILE *f = fopen (path, "r");
        if (!f)
            continue;
        if (fgets (comm, sizeof comm, f)) {
            comm[strcspn (comm, "\n")] = '\0';
            if (strcmp (comm, name) == 0)
                found = atoi (entry->d_name);
        }
        fclose (f);
    }
    closedir (dir);
    return found;
}

/* Both libraries' threads name themselves once running, so the name may come a little after
   the bind: waits for it, up to 10 s. */
static pid_t thread_named (const char *name)
{
    for (int i = 0; i < 10000; i++) {
        pid_t tid = thread_named_now (name);
        if (tid > 0)
            return tid;
        struct timespec ms = {0, 1000000};
        nanosleep (&ms, NULL);
    }
    return -1;
}

/* Starts a context with these options and checks its I/O thread's name and affinity. */
static void check_io_thread (int prefix, int cpu, const char *name)
{
    void *ctx = zmq_ctx_new ();
    if (prefix >= 0)
        CHECK (zmq_ctx_set (ctx, ZMQ_THREAD_NAME_PREFIX, prefix) == 0);
    if (cpu >= 0)
        CHECK (zmq_ctx_set (ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, cpu) == 0);
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    set_timeouts (pull, 0);
    CHECK (zmq_bind (pull, "tcp://127.0.0.1:*") == 0);
    pid_t tid = thread_named (name);
    CHECK (tid > 0);
    if (tid > 0) {
        cpu_set_t expected, actual;
        CPU_ZERO (&expected);
        if (cpu >= 0)
            CPU_SET (cpu, &expected);
        else
            CHECK (sched_getaffinity (0, sizeof expected, &expected) == 0);
        CHECK (sched_getaffinity (tid, sizeof actual, &actual) == 0);
        CHECK (CPU_EQUAL (&expected, &actual));
    }
    zmq_close (pull);
    CHECK (zmq_ctx_term (ctx) == 0);
}

int main (void)
{
    check_io_thread (-1, -1, "ZMQbg/IO/0");
    check_io_thread (7, 0, "7/ZMQbg/IO/0");
    check_io_thread (-1, 0, "ZMQbg/IO/0");
    return report ();
}
