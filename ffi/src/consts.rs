//! The constants of libzmq 4.3's stable `zmq.h`, with libzmq's exact values.
//!
//! cbindgen turns each into a `#define` in `include/zmq.h`; a C test compiles the same program
//! against libzmq's header and this one and compares every value. The version, the errno block
//! and the macros cbindgen cannot express live in `cbindgen.toml`.

use core::ffi::c_int;

/// API version this library implements (libzmq 4.3.5).
pub const ZMQ_VERSION_MAJOR: c_int = 4;
pub const ZMQ_VERSION_MINOR: c_int = 3;
pub const ZMQ_VERSION_PATCH: c_int = 5;

/// `stdint.h` types are available.
pub const ZMQ_DEFINED_STDINT: c_int = 1;

/// Context options.
pub const ZMQ_IO_THREADS: c_int = 1;
pub const ZMQ_MAX_SOCKETS: c_int = 2;
pub const ZMQ_SOCKET_LIMIT: c_int = 3;
pub const ZMQ_THREAD_PRIORITY: c_int = 3;
pub const ZMQ_THREAD_SCHED_POLICY: c_int = 4;
pub const ZMQ_MAX_MSGSZ: c_int = 5;
pub const ZMQ_MSG_T_SIZE: c_int = 6;
pub const ZMQ_THREAD_AFFINITY_CPU_ADD: c_int = 7;
pub const ZMQ_THREAD_AFFINITY_CPU_REMOVE: c_int = 8;
pub const ZMQ_THREAD_NAME_PREFIX: c_int = 9;

/// Defaults for new contexts.
pub const ZMQ_IO_THREADS_DFLT: c_int = 1;
pub const ZMQ_MAX_SOCKETS_DFLT: c_int = 1023;
pub const ZMQ_THREAD_PRIORITY_DFLT: c_int = -1;
pub const ZMQ_THREAD_SCHED_POLICY_DFLT: c_int = -1;

/// Socket types.
pub const ZMQ_PAIR: c_int = 0;
pub const ZMQ_PUB: c_int = 1;
pub const ZMQ_SUB: c_int = 2;
pub const ZMQ_REQ: c_int = 3;
pub const ZMQ_REP: c_int = 4;
pub const ZMQ_DEALER: c_int = 5;
pub const ZMQ_ROUTER: c_int = 6;
pub const ZMQ_PULL: c_int = 7;
pub const ZMQ_PUSH: c_int = 8;
pub const ZMQ_XPUB: c_int = 9;
pub const ZMQ_XSUB: c_int = 10;
pub const ZMQ_STREAM: c_int = 11;

/// Deprecated socket type aliases.
pub const ZMQ_XREQ: c_int = ZMQ_DEALER;
pub const ZMQ_XREP: c_int = ZMQ_ROUTER;

/// Socket options.
pub const ZMQ_AFFINITY: c_int = 4;
pub const ZMQ_ROUTING_ID: c_int = 5;
pub const ZMQ_SUBSCRIBE: c_int = 6;
pub const ZMQ_UNSUBSCRIBE: c_int = 7;
pub const ZMQ_RATE: c_int = 8;
pub const ZMQ_RECOVERY_IVL: c_int = 9;
pub const ZMQ_SNDBUF: c_int = 11;
pub const ZMQ_RCVBUF: c_int = 12;
pub const ZMQ_RCVMORE: c_int = 13;
pub const ZMQ_FD: c_int = 14;
pub const ZMQ_EVENTS: c_int = 15;
pub const ZMQ_TYPE: c_int = 16;
pub const ZMQ_LINGER: c_int = 17;
pub const ZMQ_RECONNECT_IVL: c_int = 18;
pub const ZMQ_BACKLOG: c_int = 19;
pub const ZMQ_RECONNECT_IVL_MAX: c_int = 21;
pub const ZMQ_MAXMSGSIZE: c_int = 22;
pub const ZMQ_SNDHWM: c_int = 23;
pub const ZMQ_RCVHWM: c_int = 24;
pub const ZMQ_MULTICAST_HOPS: c_int = 25;
pub const ZMQ_RCVTIMEO: c_int = 27;
pub const ZMQ_SNDTIMEO: c_int = 28;
pub const ZMQ_LAST_ENDPOINT: c_int = 32;
pub const ZMQ_ROUTER_MANDATORY: c_int = 33;
pub const ZMQ_TCP_KEEPALIVE: c_int = 34;
pub const ZMQ_TCP_KEEPALIVE_CNT: c_int = 35;
pub const ZMQ_TCP_KEEPALIVE_IDLE: c_int = 36;
pub const ZMQ_TCP_KEEPALIVE_INTVL: c_int = 37;
pub const ZMQ_IMMEDIATE: c_int = 39;
pub const ZMQ_XPUB_VERBOSE: c_int = 40;
pub const ZMQ_ROUTER_RAW: c_int = 41;
pub const ZMQ_IPV6: c_int = 42;
pub const ZMQ_MECHANISM: c_int = 43;
pub const ZMQ_PLAIN_SERVER: c_int = 44;
pub const ZMQ_PLAIN_USERNAME: c_int = 45;
pub const ZMQ_PLAIN_PASSWORD: c_int = 46;
pub const ZMQ_CURVE_SERVER: c_int = 47;
pub const ZMQ_CURVE_PUBLICKEY: c_int = 48;
pub const ZMQ_CURVE_SECRETKEY: c_int = 49;
pub const ZMQ_CURVE_SERVERKEY: c_int = 50;
pub const ZMQ_PROBE_ROUTER: c_int = 51;
pub const ZMQ_REQ_CORRELATE: c_int = 52;
pub const ZMQ_REQ_RELAXED: c_int = 53;
pub const ZMQ_CONFLATE: c_int = 54;
pub const ZMQ_ZAP_DOMAIN: c_int = 55;
pub const ZMQ_ROUTER_HANDOVER: c_int = 56;
pub const ZMQ_TOS: c_int = 57;
pub const ZMQ_CONNECT_ROUTING_ID: c_int = 61;
pub const ZMQ_GSSAPI_SERVER: c_int = 62;
pub const ZMQ_GSSAPI_PRINCIPAL: c_int = 63;
pub const ZMQ_GSSAPI_SERVICE_PRINCIPAL: c_int = 64;
pub const ZMQ_GSSAPI_PLAINTEXT: c_int = 65;
pub const ZMQ_HANDSHAKE_IVL: c_int = 66;
pub const ZMQ_SOCKS_PROXY: c_int = 68;
pub const ZMQ_XPUB_NODROP: c_int = 69;
pub const ZMQ_BLOCKY: c_int = 70;
pub const ZMQ_XPUB_MANUAL: c_int = 71;
pub const ZMQ_XPUB_WELCOME_MSG: c_int = 72;
pub const ZMQ_STREAM_NOTIFY: c_int = 73;
pub const ZMQ_INVERT_MATCHING: c_int = 74;
pub const ZMQ_HEARTBEAT_IVL: c_int = 75;
pub const ZMQ_HEARTBEAT_TTL: c_int = 76;
pub const ZMQ_HEARTBEAT_TIMEOUT: c_int = 77;
pub const ZMQ_XPUB_VERBOSER: c_int = 78;
pub const ZMQ_CONNECT_TIMEOUT: c_int = 79;
pub const ZMQ_TCP_MAXRT: c_int = 80;
pub const ZMQ_THREAD_SAFE: c_int = 81;
pub const ZMQ_MULTICAST_MAXTPDU: c_int = 84;
pub const ZMQ_VMCI_BUFFER_SIZE: c_int = 85;
pub const ZMQ_VMCI_BUFFER_MIN_SIZE: c_int = 86;
pub const ZMQ_VMCI_BUFFER_MAX_SIZE: c_int = 87;
pub const ZMQ_VMCI_CONNECT_TIMEOUT: c_int = 88;
pub const ZMQ_USE_FD: c_int = 89;
pub const ZMQ_GSSAPI_PRINCIPAL_NAMETYPE: c_int = 90;
pub const ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE: c_int = 91;
pub const ZMQ_BINDTODEVICE: c_int = 92;

/// Message options.
pub const ZMQ_MORE: c_int = 1;
pub const ZMQ_SHARED: c_int = 3;

/// Send/recv flags.
pub const ZMQ_DONTWAIT: c_int = 1;
pub const ZMQ_SNDMORE: c_int = 2;

/// Security mechanisms.
pub const ZMQ_NULL: c_int = 0;
pub const ZMQ_PLAIN: c_int = 1;
pub const ZMQ_CURVE: c_int = 2;
pub const ZMQ_GSSAPI: c_int = 3;

/// RADIO-DISH protocol.
pub const ZMQ_GROUP_MAX_LENGTH: c_int = 255;

/// Deprecated options and aliases.
pub const ZMQ_IDENTITY: c_int = ZMQ_ROUTING_ID;
pub const ZMQ_CONNECT_RID: c_int = ZMQ_CONNECT_ROUTING_ID;
pub const ZMQ_TCP_ACCEPT_FILTER: c_int = 38;
pub const ZMQ_IPC_FILTER_PID: c_int = 58;
pub const ZMQ_IPC_FILTER_UID: c_int = 59;
pub const ZMQ_IPC_FILTER_GID: c_int = 60;
pub const ZMQ_IPV4ONLY: c_int = 31;
pub const ZMQ_DELAY_ATTACH_ON_CONNECT: c_int = ZMQ_IMMEDIATE;
pub const ZMQ_NOBLOCK: c_int = ZMQ_DONTWAIT;
pub const ZMQ_FAIL_UNROUTABLE: c_int = ZMQ_ROUTER_MANDATORY;
pub const ZMQ_ROUTER_BEHAVIOR: c_int = ZMQ_ROUTER_MANDATORY;

/// Deprecated message options.
pub const ZMQ_SRCFD: c_int = 2;

/// GSSAPI principal name types.
pub const ZMQ_GSSAPI_NT_HOSTBASED: c_int = 0;
pub const ZMQ_GSSAPI_NT_USER_NAME: c_int = 1;
pub const ZMQ_GSSAPI_NT_KRB5_PRINCIPAL: c_int = 2;

/// Socket transport events (TCP, IPC and TIPC only).
pub const ZMQ_EVENT_CONNECTED: c_int = 0x0001;
pub const ZMQ_EVENT_CONNECT_DELAYED: c_int = 0x0002;
pub const ZMQ_EVENT_CONNECT_RETRIED: c_int = 0x0004;
pub const ZMQ_EVENT_LISTENING: c_int = 0x0008;
pub const ZMQ_EVENT_BIND_FAILED: c_int = 0x0010;
pub const ZMQ_EVENT_ACCEPTED: c_int = 0x0020;
pub const ZMQ_EVENT_ACCEPT_FAILED: c_int = 0x0040;
pub const ZMQ_EVENT_CLOSED: c_int = 0x0080;
pub const ZMQ_EVENT_CLOSE_FAILED: c_int = 0x0100;
pub const ZMQ_EVENT_DISCONNECTED: c_int = 0x0200;
pub const ZMQ_EVENT_MONITOR_STOPPED: c_int = 0x0400;
pub const ZMQ_EVENT_ALL: c_int = 0xFFFF;
/// Unspecified system errors during handshake; the event value is an errno.
pub const ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: c_int = 0x0800;
/// Handshake completed (and authenticated, if enabled); the event value is unused.
pub const ZMQ_EVENT_HANDSHAKE_SUCCEEDED: c_int = 0x1000;
/// Protocol errors between ZMTP peers or with the ZAP handler; the value is a
/// `ZMQ_PROTOCOL_ERROR_*`.
pub const ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL: c_int = 0x2000;
/// Failed authentication; the value is the ZAP status code (300, 400 or 500).
pub const ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: c_int = 0x4000;

/// Protocol error codes reported with `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL`.
pub const ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED: c_int = 0x10000000;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND: c_int = 0x10000001;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE: c_int = 0x10000002;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE: c_int = 0x10000003;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED: c_int = 0x10000011;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE: c_int = 0x10000012;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO: c_int = 0x10000013;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE: c_int = 0x10000014;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR: c_int = 0x10000015;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY: c_int = 0x10000016;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME: c_int = 0x10000017;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA: c_int = 0x10000018;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC: c_int = 0x11000001;
pub const ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH: c_int = 0x11000002;
pub const ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED: c_int = 0x20000000;
pub const ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY: c_int = 0x20000001;
pub const ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID: c_int = 0x20000002;
pub const ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION: c_int = 0x20000003;
pub const ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE: c_int = 0x20000004;
pub const ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA: c_int = 0x20000005;
pub const ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED: c_int = 0x30000000;

/// `zmq_poll` event bits.
pub const ZMQ_POLLIN: c_int = 1;
pub const ZMQ_POLLOUT: c_int = 2;
pub const ZMQ_POLLERR: c_int = 4;
pub const ZMQ_POLLPRI: c_int = 8;

pub const ZMQ_POLLITEMS_DFLT: c_int = 16;

/// `zmq_has` is available.
pub const ZMQ_HAS_CAPABILITIES: c_int = 1;

/// Deprecated device types.
pub const ZMQ_STREAMER: c_int = 1;
pub const ZMQ_FORWARDER: c_int = 2;
pub const ZMQ_QUEUE: c_int = 3;
