/* What ffi/perf's no-ZMQ programs (raw_tcp.c, raw_lat.c) share: one stream connection over
 * loopback tcp or a Unix socket, named the way libzmq's perf tools name theirs, and the clock.
 *
 * ENDPOINT is "tcp://127.0.0.1:PORT" (any host part is taken as 127.0.0.1), a bare PORT
 * (tcp, as raw_tcp's first form took it), or "ipc:///path/to/socket". tcp connections get
 * TCP_NODELAY, as both libraries set it; socket buffers are left at the OS default, as both
 * libraries leave them (ferromq widens an ipc sender's buffer once it writes large bodies:
 * RAW_SNDBUF=N asks for N bytes on both ends, to compare). The listening side accepts one
 * connection; the connecting side retries for up to five seconds while nothing listens yet.
 */
#ifndef FERROMQ_RAW_SOCKET_H
#define FERROMQ_RAW_SOCKET_H

#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die (const char *what)
{
    perror (what);
    exit (1);
}

/* The address ENDPOINT names, its family's socket type in *family, its length in *len. */
static struct sockaddr_storage raw_address (const char *endpoint, int *family, socklen_t *len)
{
    struct sockaddr_storage a;
    memset (&a, 0, sizeof a);
    if (strncmp (endpoint, "ipc://", 6) == 0) {
        struct sockaddr_un *u = (struct sockaddr_un *) &a;
        const char *path = endpoint + 6;
        if (strlen (path) >= sizeof u->sun_path) {
            fprintf (stderr, "ipc path too long: %s\n", path);
            exit (1);
        }
        u->sun_family = AF_UNIX;
        strcpy (u->sun_path, path);
        *family = AF_UNIX;
        *len = sizeof *u;
        return a;
    }
    const char *port = strrchr (endpoint, ':');
    port = port ? port + 1 : endpoint;
    struct sockaddr_in *in = (struct sockaddr_in *) &a;
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl (0x7f000001);
    in->sin_port = htons (atoi (port));
    *family = AF_INET;
    *len = sizeof *in;
    return a;
}

/* TCP_NODELAY on a tcp socket, RAW_SNDBUF on either. */
static void raw_options (int s, int family)
{
    int one = 1;
    if (family == AF_INET && setsockopt (s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        die ("TCP_NODELAY");
    if (getenv ("RAW_SNDBUF")) {
        int bytes = atoi (getenv ("RAW_SNDBUF"));
        if (setsockopt (s, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) != 0)
            die ("SO_SNDBUF");
    }
}

/* One connection accepted on ENDPOINT. */
static int raw_accept (const char *endpoint)
{
    int family, one = 1;
    socklen_t len;
    struct sockaddr_storage a = raw_address (endpoint, &family, &len);
    if (family == AF_UNIX)
        unlink (((struct sockaddr_un *) &a)->sun_path);
    int l = socket (family, SOCK_STREAM, 0);
    if (l < 0 || setsockopt (l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
        die ("socket");
    if (bind (l, (struct sockaddr *) &a, len) != 0 || listen (l, 1) != 0)
        die ("bind");
    int s = accept (l, NULL, NULL);
    if (s < 0)
        die ("accept");
    close (l);
    if (family == AF_UNIX)
        unlink (((struct sockaddr_un *) &a)->sun_path);
    raw_options (s, family);
    return s;
}

/* A connection to ENDPOINT, once something listens there. */
static int raw_connect (const char *endpoint)
{
    int family;
    socklen_t len;
    struct sockaddr_storage a = raw_address (endpoint, &family, &len);
    for (int tries = 0;; tries++) {
        int s = socket (family, SOCK_STREAM, 0);
        if (s < 0)
            die ("socket");
        if (connect (s, (struct sockaddr *) &a, len) == 0) {
            raw_options (s, family);
            return s;
        }
        if ((errno != ECONNREFUSED && errno != ENOENT) || tries == 500)
            die ("connect");
        close (s);
        usleep (10000);
    }
}

/* Reads SIZE bytes into P with blocking reads, each taking what has arrived. */
static void read_all (int s, char *p, size_t size)
{
    for (size_t off = 0; off < size;) {
        ssize_t n = read (s, p + off, size - off);
        if (n <= 0)
            die ("read");
        off += n;
    }
}

/* SIZE bytes that start OFFSET bytes into a page. */
static char *raw_buffer (size_t size, size_t offset)
{
    char *base = malloc (size + 8192);
    if (!base)
        die ("malloc");
    return (char *) (((unsigned long) base + 4095) & ~4095UL) + offset % 4096;
}

#endif
