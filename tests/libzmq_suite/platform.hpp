/* platform.hpp for building libzmq 4.3.4's test programs (tests/libzmq_suite/run.sh) on Linux.
 * libzmq's configure step generates this file; the tests read it only for what the platform
 * offers, so the same file serves both libraries (the libzmq control tells what its build lacks). */
#ifndef FERROMQ_LIBZMQ_SUITE_PLATFORM_HPP
#define FERROMQ_LIBZMQ_SUITE_PLATFORM_HPP
#define ZMQ_HAVE_LINUX 1
#define ZMQ_HAVE_IPC 1
#define ZMQ_HAVE_UIO 1
#define ZMQ_HAVE_SO_PEERCRED 1
#define ZMQ_HAVE_SO_PRIORITY 1
#define ZMQ_HAVE_CURVE 1
#define HAVE_FORK 1
#define HAVE_MKDTEMP 1
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#endif
