/* A small non-blocking DNS stub resolver on a core's loop, for the
 * outbound connections (net/dial, for net/client and net/pg): UDP queries
 * over the process's stack (net/stack.h's datagrams: the kernel's sockets
 * or lwIP) to the nameservers of INGOT_DNS_SERVER, the stack (lwIP's DHCP)
 * or resolv.conf, answers from the hosts file, a bounded per-core cache.
 * One resolver per core, used only on that core's thread; nothing is
 * locked or shared.
 *
 * What it does, where libcs differ:
 *   - Files: INGOT_HOSTS_FILE (default /etc/hosts) and INGOT_RESOLV_CONF
 *     (default /etc/resolv.conf) are read once per resolver, on the first
 *     name that needs them; later edits are not seen. INGOT_DNS_PORT
 *     (default 53) is the nameservers' port: resolv.conf cannot name one,
 *     and tests run their server on a random port. These and
 *     INGOT_DNS_SERVER come from the settings table
 *     (net/dns/dns_settings.h: ig_dns_config), checked at startup.
 *   - The nameservers: INGOT_DNS_SERVER's (up to 3 addresses) when set;
 *     else, on a stack that learns them (lwIP: DHCP's option 6), the
 *     stack's, taken again when a lookup starts with none in flight (a
 *     lease may come or change later; none yet fails the lookup at once,
 *     saying so); else resolv.conf's nameserver lines. resolv.conf's
 *     options apply to every kind.
 *   - No resolv.conf, or one without a nameserver line (a scratch image),
 *     on the kernel's stack: the nameserver is 127.0.0.1, as glibc and
 *     musl do. No hosts file: only "localhost" and the numeric forms
 *     resolve without DNS.
 *   - resolv.conf: up to 3 "nameserver" lines (IPv4 or IPv6, no %scope);
 *     "options timeout:N" (seconds, default 5, at most 30) and
 *     "attempts:N" (default 2, at most 5). search, domain, ndots and rotate
 *     are ignored: a name is always queried as given, as an absolute name.
 *   - Order of tries: each attempt asks the nameservers in turn, each for
 *     timeout seconds (glibc's order); a server that answers SERVFAIL or
 *     REFUSED, or whose port is closed (ICMP unreachable), is left at once
 *     for the next. Worst case: attempts * nameservers * timeout.
 *   - A and AAAA are asked together on one endpoint; the addresses are
 *     delivered IPv4 first, then IPv6 (most stubs prefer A), at most
 *     DNS_MAX_PER_FAMILY of each. If one family answers and the other
 *     times out on every server, the answered ones are delivered.
 *   - Each try uses a new UDP endpoint with a stack-chosen ephemeral
 *     source port, connected to the server (so only its datagrams are
 *     read), and fresh random query IDs (getrandom). lwIP reports no ICMP
 *     unreachable to UDP: there a closed port costs the try's timeout. A reply is used only if its ID,
 *     QR bit, opcode and question (name, type, class) match; anything else
 *     is dropped and the wait goes on.
 *   - A truncated reply (TC) fails the lookup with "truncated"; there is no
 *     TCP fallback. NXDOMAIN fails at once ("host not found"), as does an
 *     answer with no address for either family ("no address").
 *   - CNAME chains are followed inside one answer (up to 8 links); the
 *     target is not queried again if the answer stops at a CNAME.
 *   - Cache: DNS_CACHE_SLOTS names per resolver, each kept for the least
 *     TTL of the records used (at most an hour; TTL 0 is not cached);
 *     failures are not cached. Lookups of a name already in flight join it.
 *   - Hosts file entries win over DNS and are not subject to TTLs.
 *   - Names: 1..253 octets of letters, digits, '-' and '_' in labels of
 *     1..63, an optional final dot; compared without case. IPv4 dotted
 *     quads, IPv6 literals (bare or in brackets, no %scope), "localhost"
 *     and names under ".localhost" (127.0.0.1, then ::1) are answered
 *     without any file or network.
 * Memory: the resolver itself, the hosts table and the cache are allocated
 * once when the resolver is made or its files are first read; a lookup and
 * each query waiting on it come from the resolver's pools. */
#ifndef NET_DNS_DNS_H
#define NET_DNS_DNS_H

#include "net/dns/dns_wire.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct ig_loop;
struct dns_resolver;
struct dns_query;

#define DNS_MAX_ADDRS (2 * DNS_MAX_PER_FAMILY)
#define DNS_CACHE_SLOTS 64

/* The one failure a lookup reports; its message says what went wrong. */
#define DNS_FAILED 1

/* error: 0, or DNS_FAILED with a message that
 * names the host and says why ("api.test: host not found (NXDOMAIN)").
 * On success addrs[0..count) hold the addresses (AF_INET before AF_INET6)
 * with the port asked for, count >= 1, and message is NULL. addrs and
 * message are valid only during the call. Returning from done ends the
 * query: it must not be cancelled afterwards. */
typedef void dns_done_fn(void *arg, int error, const struct sockaddr_storage *addrs,
			 size_t count, const char *message);

/* A resolver for the loop's core; NULL if memory is short. */
struct dns_resolver *ig_dns_resolver_new(struct ig_loop *loop);

/* Ends every lookup (their done callbacks do not run) and frees the
 * resolver. Not from inside a done callback. */
void ig_dns_resolver_free(struct dns_resolver *r);

/* Resolves host (NUL-terminated) to addresses with the given port and calls
 * done(arg, ...) once, on the loop's thread. When the answer needs no
 * network (a numeric host, localhost, a hosts file entry, a cache hit) or
 * the call fails at once (an invalid name, too many lookups in flight, no
 * nameserver, no server could be asked), done runs before ig_dns_resolve
 * returns, and it returns NULL.
 * Otherwise it returns the query, for ig_dns_cancel, and done runs later. */
struct dns_query *ig_dns_resolve(struct dns_resolver *r, const char *host, uint16_t port,
			      dns_done_fn *done, void *arg);

/* Withdraws a query whose done has not run: done will not run. The lookup
 * itself stops when no query waits on it any more. */
void ig_dns_cancel(struct dns_query *q);

/* Queries waiting for an answer (for tests and metrics). */
size_t ig_dns_resolver_pending(const struct dns_resolver *r);

#endif
