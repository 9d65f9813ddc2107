//! ZAP (RFC 27, ZeroMQ Authentication Protocol): the request a mechanism's server sends to the
//! handler bound at `inproc://zeromq.zap.01`, and the handler's reply, as frames.
//!
//! ```text
//!  request: "" | "1.0" | request-id | domain | address | identity | mechanism | credentials...
//!  reply:   "" | "1.0" | request-id | status-code | status-text | user-id | metadata
//! ```
//!
//! The empty first frame is the REQ envelope delimiter libzmq writes, so a REP handler works.
//! Replies are checked as libzmq 4.3 checks them (src/zap_client.cpp
//! `receive_and_process_zap_reply`), each refusal carrying libzmq's `ZMQ_PROTOCOL_ERROR_ZAP_*`.

use bytes::Bytes;

use crate::greeting::Mechanism;
use crate::metadata::Metadata;

/// Where a ZAP handler is bound, in the context of the socket that asks it.
pub const ZAP_ENDPOINT: &str = "inproc://zeromq.zap.01";

const VERSION: &[u8] = b"1.0";

/// libzmq's `ZMQ_PROTOCOL_ERROR_ZAP_*` values (include/zmq.h).
pub mod zap_error {
    /// ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY
    pub const MALFORMED_REPLY: u32 = 0x2000_0001;
    /// ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID
    pub const BAD_REQUEST_ID: u32 = 0x2000_0002;
    /// ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION
    pub const BAD_VERSION: u32 = 0x2000_0003;
    /// ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE
    pub const INVALID_STATUS_CODE: u32 = 0x2000_0004;
    /// ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA
    pub const INVALID_METADATA: u32 = 0x2000_0005;
}

/// What a mechanism's server asks the handler: the mechanism and its credential frames
/// (PLAIN: username, password; CURVE: the client's public key; NULL: none).
#[derive(Clone, PartialEq, Eq)]
pub struct ZapRequest {
    /// The mechanism frame.
    pub mechanism: Mechanism,
    /// The credential frames.
    pub credentials: Vec<Bytes>,
}

impl std::fmt::Debug for ZapRequest {
    /// Never prints credentials (a PLAIN password).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZapRequest")
            .field("mechanism", &self.mechanism)
            .field("credentials", &self.credentials.len())
            .finish()
    }
}

/// The connection facts a request carries besides the credentials.
#[derive(Debug, Clone, Copy)]
pub struct ZapContext<'a> {
    /// The request id echoed by the reply (libzmq sends "1").
    pub request_id: &'a [u8],
    /// `ZMQ_ZAP_DOMAIN` of the server socket.
    pub domain: &'a [u8],
    /// The client's IP address (empty when there is none, e.g. ipc).
    pub address: &'a [u8],
    /// The server socket's own routing id (libzmq sends its `ZMQ_ROUTING_ID`).
    pub identity: &'a [u8],
}

impl ZapRequest {
    /// The request's frames, envelope delimiter first.
    pub fn frames(&self, ctx: &ZapContext<'_>) -> Vec<Bytes> {
        let mut frames = vec![
            Bytes::new(),
            Bytes::from_static(VERSION),
            Bytes::copy_from_slice(ctx.request_id),
            Bytes::copy_from_slice(ctx.domain),
            Bytes::copy_from_slice(ctx.address),
            Bytes::copy_from_slice(ctx.identity),
            Bytes::copy_from_slice(self.mechanism.name()),
        ];
        frames.extend(self.credentials.iter().cloned());
        frames
    }
}

/// An accepted reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZapReply {
    /// 200 admits; 300 (temporary failure), 400 (refused) and 500 (handler error) refuse.
    pub status: u16,
    /// The user id the handler gives the peer (`zmq_msg_gets (msg, "User-Id")`).
    pub user_id: Bytes,
    /// Properties the handler adds to the peer's messages.
    pub metadata: Metadata,
}

/// A reply libzmq would refuse; [`ZapReplyError::protocol_error_code`] is what its
/// HANDSHAKE_FAILED_PROTOCOL event reports.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZapReplyError {
    /// Not seven frames after the delimiter, or a non-empty delimiter.
    Malformed,
    /// Version other than "1.0".
    BadVersion,
    /// Request id other than ours.
    BadRequestId,
    /// Status code other than 200, 300, 400 or 500.
    InvalidStatusCode,
    /// The metadata frame is not a property list.
    InvalidMetadata,
}

impl ZapReplyError {
    /// libzmq's `ZMQ_PROTOCOL_ERROR_ZAP_*` for this refusal.
    pub fn protocol_error_code(self) -> u32 {
        match self {
            Self::Malformed => zap_error::MALFORMED_REPLY,
            Self::BadVersion => zap_error::BAD_VERSION,
            Self::BadRequestId => zap_error::BAD_REQUEST_ID,
            Self::InvalidStatusCode => zap_error::INVALID_STATUS_CODE,
            Self::InvalidMetadata => zap_error::INVALID_METADATA,
        }
    }
}

impl std::fmt::Display for ZapReplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self {
            Self::Malformed => "malformed ZAP reply",
            Self::BadVersion => "ZAP reply with a version other than 1.0",
            Self::BadRequestId => "ZAP reply to another request",
            Self::InvalidStatusCode => "ZAP reply with an invalid status code",
            Self::InvalidMetadata => "ZAP reply with invalid metadata",
        };
        f.write_str(what)
    }
}

impl std::error::Error for ZapReplyError {}

/// Parses a handler's reply to the request with `request_id`.
pub fn parse_reply(frames: &[Bytes], request_id: &[u8]) -> Result<ZapReply, ZapReplyError> {
    let [delimiter, version, id, status, _text, user_id, metadata] = frames else {
        return Err(ZapReplyError::Malformed);
    };
    if !delimiter.is_empty() {
        return Err(ZapReplyError::Malformed);
    }
    if version != VERSION {
        return Err(ZapReplyError::BadVersion);
    }
    if id != request_id {
        return Err(ZapReplyError::BadRequestId);
    }
    let status = match &status[..] {
        b"200" => 200,
        b"300" => 300,
        b"400" => 400,
        b"500" => 500,
        _ => return Err(ZapReplyError::InvalidStatusCode),
    };
    let metadata =
        Metadata::decode(metadata.clone()).map_err(|_| ZapReplyError::InvalidMetadata)?;
    Ok(ZapReply {
        status,
        user_id: user_id.clone(),
        metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn b(s: &'static [u8]) -> Bytes {
        Bytes::from_static(s)
    }

    #[test]
    fn request_frames_as_rfc_27() {
        let req = ZapRequest {
            mechanism: Mechanism::Plain,
            credentials: vec![b(b"admin"), b(b"secret")],
        };
        let ctx = ZapContext {
            request_id: b"1",
            domain: b"global",
            address: b"127.0.0.1",
            identity: b"",
        };
        let frames = req.frames(&ctx);
        let want: [&[u8]; 9] = [
            b"",
            b"1.0",
            b"1",
            b"global",
            b"127.0.0.1",
            b"",
            b"PLAIN",
            b"admin",
            b"secret",
        ];
        assert_eq!(frames.iter().map(|f| &f[..]).collect::<Vec<_>>(), want);
        assert!(!format!("{req:?}").contains("secret"));
    }

    #[test]
    fn replies_checked_as_libzmq() {
        let reply = |f: [&'static [u8]; 7]| parse_reply(&f.map(b), b"1");
        let ok = reply([
            b"",
            b"1.0",
            b"1",
            b"200",
            b"OK",
            b"alice",
            b"\x01X\0\0\0\x01y",
        ])
        .unwrap();
        assert_eq!((ok.status, &ok.user_id[..]), (200, &b"alice"[..]));
        assert_eq!(ok.metadata.get("X").unwrap(), &b"y"[..]);
        assert_eq!(
            reply([b"", b"1.0", b"1", b"400", b"no", b"", b""])
                .unwrap()
                .status,
            400
        );
        let err = |f, e: ZapReplyError| assert_eq!(reply(f), Err(e));
        err(
            [b"x", b"1.0", b"1", b"200", b"", b"", b""],
            ZapReplyError::Malformed,
        );
        err(
            [b"", b"2.0", b"1", b"200", b"", b"", b""],
            ZapReplyError::BadVersion,
        );
        err(
            [b"", b"1.0", b"2", b"200", b"", b"", b""],
            ZapReplyError::BadRequestId,
        );
        err(
            [b"", b"1.0", b"1", b"201", b"", b"", b""],
            ZapReplyError::InvalidStatusCode,
        );
        err(
            [b"", b"1.0", b"1", b"200", b"", b"", b"\x01"],
            ZapReplyError::InvalidMetadata,
        );
        assert_eq!(parse_reply(&[b(b"")], b"1"), Err(ZapReplyError::Malformed));
        assert_eq!(ZapReplyError::BadVersion.protocol_error_code(), 0x2000_0003);
    }

    proptest! {
        #[test]
        fn arbitrary_replies_never_panic(
            frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..9),
        ) {
            let frames: Vec<Bytes> = frames.into_iter().map(Bytes::from).collect();
            if let Ok(r) = parse_reply(&frames, b"1") {
                prop_assert!(matches!(r.status, 200 | 300 | 400 | 500));
            }
        }
    }
}
