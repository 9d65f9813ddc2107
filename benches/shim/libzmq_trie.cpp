// A C face for libzmq's two subscription tries, so the Rust benches can time libzmq's own code
// beside ferromq's in one criterion run.
//
// - zmq::trie_t is what a SUB/XSUB socket matches incoming messages against (xsub_t::match
//   calls trie_t::check). Its methods are compiled in libzmq.a (src/trie.cpp) and linked from
//   there through the zmq-sys crate; only the declarations come from trie.hpp.
// - zmq::generic_mtrie_t<T> is what a PUB/XPUB socket finds subscribers with (libzmq
//   instantiates it as mtrie_t = generic_mtrie_t<pipe_t>). It is a template, so it is
//   instantiated here from libzmq's generic_mtrie_impl.hpp, unmodified, with T = void: the
//   trie only stores and compares the value pointers and hands them to the callback, never
//   dereferences them, so an opaque peer token stands in for a pipe.
//
// Nothing here catches. Every function is noexcept: for this use nothing throws except
// std::bad_alloc from std::set::insert inside generic_mtrie_t::add when memory runs out, and
// libzmq's own allocation failures abort (alloc_assert). Under noexcept such an exception calls
// std::terminate instead of unwinding into Rust frames.

#include <stddef.h>
#include <stdint.h>

#include "trie.hpp"
#include "generic_mtrie_impl.hpp"

typedef zmq::generic_mtrie_t<void> peer_mtrie_t;

extern "C" {

typedef void (*ferromq_libzmq_peer_fn) (void *peer, void *arg);

zmq::trie_t *ferromq_libzmq_trie_new () noexcept
{
    return new (std::nothrow) zmq::trie_t;
}

void ferromq_libzmq_trie_free (zmq::trie_t *trie) noexcept
{
    delete trie;
}

// trie_t::add takes a non-const pointer but only reads the prefix.
bool ferromq_libzmq_trie_add (zmq::trie_t *trie,
                              const unsigned char *prefix,
                              size_t size) noexcept
{
    return trie->add (const_cast<unsigned char *> (prefix), size);
}

bool ferromq_libzmq_trie_check (const zmq::trie_t *trie,
                                const unsigned char *data,
                                size_t size) noexcept
{
    return trie->check (data, size);
}

peer_mtrie_t *ferromq_libzmq_mtrie_new () noexcept
{
    return new (std::nothrow) peer_mtrie_t;
}

void ferromq_libzmq_mtrie_free (peer_mtrie_t *trie) noexcept
{
    delete trie;
}

bool ferromq_libzmq_mtrie_add (peer_mtrie_t *trie,
                               const unsigned char *prefix,
                               size_t size,
                               void *peer) noexcept
{
    return trie->add (prefix, size, peer);
}

// Calls f(peer, arg) once for each peer subscribed to a prefix of data, as
// xpub_t::xsend does with mark_as_matching.
void ferromq_libzmq_mtrie_match (peer_mtrie_t *trie,
                                 const unsigned char *data,
                                 size_t size,
                                 ferromq_libzmq_peer_fn f,
                                 void *arg) noexcept
{
    trie->match (data, size, f, arg);
}
}
