/* Unit tests of net/dns/dns: a real loop in this process, the resolver
 * on it, and the test's own small UDP DNS servers on the same loop, at
 * 127.0.0.1 and 127.0.0.2 on one random port (INGOT_DNS_PORT), serving a
 * fixed zone and misbehaving on request (silence, forged replies, TC,
 * SERVFAIL). Each test writes its own resolv.conf and hosts file (or leaves
 * them absent) and makes a fresh resolver, which reads them on first use. */
#include "net/dns/dns.h"
#include "kernel/runtime/loop.h"
#include "ingot/client.h"
#include "net/dns/dns_settings.h"
#include "net/stack.h"
#include "tests/unit/check.h"
#include "tests/unit/fds.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define T_A 1
#define T_CNAME 5
#define T_TXT 16
#define T_AAAA 28

static struct ig_loop loop;
/* The resolver's transport: the kernel's UDP, or a stack that learns
 * nameservers of its own (test_stack_nameservers). */
const struct ig_net_stack *ig_net_stack = &ig_kernel_stack;
static char dir[64];
static uint16_t dns_port;

/* ---- the zone the test servers answer from ------------------------------ */

struct record {
	const char *owner;
	uint16_t type;
	const char *data; /* address or target name */
	uint32_t ttl;
};

static const struct record zone[] = {
	{ "a.test", T_A, "192.0.2.1", 300 },
	{ "a.test", T_A, "192.0.2.2", 300 },
	{ "a.test", T_AAAA, "2001:db8::1", 300 },
	{ "v4only.test", T_A, "192.0.2.4", 300 },
	{ "v6only.test", T_AAAA, "2001:db8::6", 300 },
	{ "alias.test", T_CNAME, "mid.test", 300 },
	{ "mid.test", T_CNAME, "final.test", 60 },
	{ "final.test", T_A, "192.0.2.9", 300 },
	{ "loop.test", T_CNAME, "loop.test", 300 },
	{ "zero.test", T_A, "192.0.2.7", 0 },
	{ "hosts.test", T_A, "192.0.2.99", 300 },
	{ "nodata.test", T_TXT, "", 300 },
};

enum mode {
	SERVE,
	SILENT,
	FORGERIES_FIRST, /* wrong ID, wrong question, a query, a runt; then the answer */
	TRUNCATE,
	SERVFAIL,
	SELF_POINTER, /* an answer whose owner name points at itself */
	SHORT_RECORD, /* an answer cut inside its record */
	DROP_AAAA,    /* answers A questions, never AAAA ones */
};

struct server {
	int fd;
	struct ig_io io;
	enum mode mode;
	unsigned queries;
	uint16_t ids[64];
	uint16_t ports[64];
};

static struct server servers[2]; /* 127.0.0.1 and 127.0.0.2 */

static size_t put_name(uint8_t *out, const char *name)
{
	size_t o = 0;
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t n = dot ? (size_t)(dot - name) : strlen(name);
		out[o++] = (uint8_t)n;
		memcpy(out + o, name, n);
		o += n;
		name += n + (dot ? 1 : 0);
	}
	out[o++] = 0;
	return o;
}

static size_t put_rr(uint8_t *out, const char *qname, const struct record *r)
{
	size_t o = 0;
	if (strcmp(r->owner, qname) == 0) { /* compressed, as servers do */
		out[o++] = 0xC0;
		out[o++] = 12;
	} else {
		o += put_name(out, r->owner);
	}
	uint8_t rdata[256];
	size_t rdlen = 0;
	if (r->type == T_A)
		rdlen = inet_pton(AF_INET, r->data, rdata) == 1 ? 4 : 0;
	else if (r->type == T_AAAA)
		rdlen = inet_pton(AF_INET6, r->data, rdata) == 1 ? 16 : 0;
	else if (r->type == T_CNAME)
		rdlen = put_name(rdata, r->data);
	uint8_t fixed[10] = { 0, (uint8_t)r->type, 0, 1, (uint8_t)(r->ttl >> 24), (uint8_t)(r->ttl >> 16),
			      (uint8_t)(r->ttl >> 8), (uint8_t)r->ttl, 0, (uint8_t)rdlen };
	memcpy(out + o, fixed, 10);
	memcpy(out + o + 10, rdata, rdlen);
	return o + 10 + rdlen;
}

/* A recursive server's answer: the CNAME chain from the question's name,
 * then the records of the asked type at its end. */
static size_t answer(const uint8_t *q, size_t qlen, uint8_t *out, const char *qname, uint16_t qtype,
		     uint16_t rcode_flags)
{
	memcpy(out, q, qlen); /* header and question */
	out[2] = 0x81;        /* QR, RD */
	out[3] = (uint8_t)(0x80 | rcode_flags);
	size_t o = qlen;
	unsigned count = 0;
	bool exists = false;
	char cur[256];
	snprintf(cur, sizeof cur, "%s", qname);
	for (int links = 0; links < 10; links++) {
		const struct record *cname = NULL;
		for (size_t i = 0; i < IG_COUNTOF(zone); i++) {
			if (strcmp(zone[i].owner, cur) == 0) {
				exists = true;
				if (zone[i].type == T_CNAME)
					cname = &zone[i];
			}
		}
		if (!cname || rcode_flags)
			break;
		o += put_rr(out + o, qname, cname);
		count++;
		if (strcmp(cname->data, cur) == 0)
			break;
		snprintf(cur, sizeof cur, "%s", cname->data);
	}
	for (size_t i = 0; i < IG_COUNTOF(zone) && !rcode_flags; i++) {
		if (strcmp(zone[i].owner, cur) == 0 && zone[i].type == qtype) {
			o += put_rr(out + o, qname, &zone[i]);
			count++;
		}
	}
	if (!exists && !rcode_flags)
		out[3] |= 3; /* NXDOMAIN */
	out[6] = 0;
	out[7] = (uint8_t)count;
	out[8] = out[9] = out[10] = out[11] = 0;
	return o;
}

static void on_query(struct ig_io *io, uint32_t events)
{
	(void)events;
	struct server *s = (struct server *)((char *)io - offsetof(struct server, io));
	uint8_t q[512], out[2048];
	struct sockaddr_in from;
	socklen_t from_len = sizeof from;
	ssize_t n;
	while ((n = recvfrom(s->fd, q, sizeof q, 0, (struct sockaddr *)&from, &from_len)) > 0) {
		if (s->queries < IG_COUNTOF(s->ids)) {
			s->ids[s->queries] = (uint16_t)(q[0] << 8 | q[1]);
			s->ports[s->queries] = ntohs(from.sin_port);
		}
		s->queries++;
		if (s->mode == SILENT || n < 17)
			continue;
		char qname[256];
		size_t at = 12, o = 0;
		while (at < (size_t)n && q[at] && o + q[at] + 1 < sizeof qname) {
			if (o)
				qname[o++] = '.';
			memcpy(qname + o, q + at + 1, q[at]);
			o += q[at];
			at += 1u + q[at];
		}
		qname[o] = '\0';
		size_t qlen = at + 5;
		if (qlen > (size_t)n)
			continue;
		uint16_t qtype = (uint16_t)(q[at + 1] << 8 | q[at + 2]);
		if (s->mode == DROP_AAAA && qtype == T_AAAA)
			continue;
		uint16_t flags = s->mode == TRUNCATE ? 0x200 : s->mode == SERVFAIL ? 2 : 0;
		size_t len = answer(q, qlen, out, qname, qtype, flags & 0xF);
		if (flags & 0x200)
			out[2] |= 0x02;
		if (s->mode == SELF_POINTER || s->mode == SHORT_RECORD) {
			static const uint8_t rr[] = { 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1 };
			out[7] = 1;
			len = qlen;
			out[len] = 0xC0;
			out[len + 1] = (uint8_t)len;
			memcpy(out + len + 2, rr, sizeof rr);
			len += s->mode == SELF_POINTER ? 2 + sizeof rr : 2 + 5;
		}
		if (s->mode == FORGERIES_FIRST) {
			/* Each forgery carries another last address, so taking
			 * any of them shows in the result. */
			static const size_t flip[] = { 0, 13, 2, 0 };
			static const uint8_t mask[] = { 0x80, 0x03, 0x80, 0 };
			for (size_t i = 0; i < IG_COUNTOF(flip); i++) {
				uint8_t forged[2048];
				memcpy(forged, out, len);
				forged[len - 1] ^= 0xff;
				if (mask[i])
					forged[flip[i]] ^= mask[i]; /* ID, question name, QR */
				else
					forged[qlen - 3] ^= 0x01; /* question type */
				sendto(s->fd, forged, len, 0, (struct sockaddr *)&from, from_len);
			}
			sendto(s->fd, out, 7, 0, (struct sockaddr *)&from, from_len); /* a runt */
		}
		sendto(s->fd, out, len, 0, (struct sockaddr *)&from, from_len);
	}
}

static int bind_udp(const char *ip, uint16_t port)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, ip, &a.sin_addr);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Both servers on one random port: the kernel picks it for the first. */
static bool start_servers(void)
{
	for (int tries = 0; tries < 20; tries++) {
		int fd0 = bind_udp("127.0.0.1", 0);
		struct sockaddr_in a;
		socklen_t len = sizeof a;
		if (fd0 < 0 || getsockname(fd0, (struct sockaddr *)&a, &len) != 0)
			return false;
		int fd1 = bind_udp("127.0.0.2", ntohs(a.sin_port));
		if (fd1 < 0) {
			close(fd0);
			continue;
		}
		dns_port = ntohs(a.sin_port);
		servers[0] = (struct server){ .fd = fd0, .io.fn = on_query };
		servers[1] = (struct server){ .fd = fd1, .io.fn = on_query };
		return ig_loop_add(&loop, fd0, EPOLLIN, &servers[0].io) == 0 &&
		       ig_loop_add(&loop, fd1, EPOLLIN, &servers[1].io) == 0;
	}
	return false;
}

/* ---- running queries ------------------------------------------------------ */

struct result {
	bool called;
	int error;
	char addrs[400]; /* "192.0.2.1:80,[2001:db8::1]:80" */
	char message[400];
};

static unsigned done_count, done_target;
static bool watchdog_fired;

static void on_done(void *arg, int error, const struct sockaddr_storage *addrs, size_t count,
		    const char *message)
{
	struct result *res = arg;
	*res = (struct result){ .called = true, .error = error };
	snprintf(res->message, sizeof res->message, "%s", message ? message : "");
	size_t o = 0;
	for (size_t i = 0; i < count; i++) {
		char ip[INET6_ADDRSTRLEN];
		if (addrs[i].ss_family == AF_INET) {
			const struct sockaddr_in *s = (const struct sockaddr_in *)&addrs[i];
			inet_ntop(AF_INET, &s->sin_addr, ip, sizeof ip);
			o += (size_t)snprintf(res->addrs + o, sizeof res->addrs - o, "%s%s:%u", i ? "," : "",
					      ip, ntohs(s->sin_port));
		} else {
			const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)&addrs[i];
			inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof ip);
			o += (size_t)snprintf(res->addrs + o, sizeof res->addrs - o, "%s[%s]:%u",
					      i ? "," : "", ip, ntohs(s->sin6_port));
		}
		if (o >= sizeof res->addrs)
			break;
	}
	if (++done_count >= done_target)
		loop.running = false;
}

static void on_watchdog(struct ig_timer *t)
{
	(void)t;
	watchdog_fired = true;
	loop.running = false;
}

/* Runs the loop until `n` done callbacks have run since the last reset
 * (a guard stops it after 30 s, which fails the test instead of hanging). */
static void wait_for_dones(unsigned n)
{
	done_target = n;
	if (done_count >= n)
		return;
	struct ig_timer watchdog = { .fn = on_watchdog };
	ig_clock_update(&loop.clock);
	ig_timer_set(&loop.timers, &watchdog, loop.clock.now_ms + 30000);
	ig_loop_run(&loop);
	ig_timer_cancel(&loop.timers, &watchdog);
}

static void write_file(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!text) {
		unlink(path);
		return;
	}
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A fresh resolver over these files (NULL: the file is absent). */
static struct dns_resolver *setup(const char *resolv_conf, const char *hosts)
{
	write_file("resolv.conf", resolv_conf);
	write_file("hosts", hosts);
	for (int i = 0; i < 2; i++) {
		servers[i].mode = SERVE;
		servers[i].queries = 0;
	}
	done_count = 0;
	watchdog_fired = false;
	return ig_dns_resolver_new(&loop);
}

static const char *const ONE_NS = "nameserver 127.0.0.1\n";

/* Resolves and waits; returns whether ig_dns_resolve answered at once. */
static bool resolve(struct dns_resolver *r, const char *host, uint16_t port, struct result *res)
{
	*res = (struct result){ 0 };
	unsigned before = done_count;
	struct dns_query *q = ig_dns_resolve(r, host, port, on_done, res);
	bool at_once = q == NULL;
	if (at_once && done_count != before + 1)
		printf("# ig_dns_resolve returned NULL without calling done\n");
	wait_for_dones(before + 1);
	return at_once;
}

static bool has(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

/* ---- the tests ------------------------------------------------------------ */

static void test_literals(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	struct result res;
	CHECK(resolve(r, "192.0.2.5", 8080, &res) && res.error == 0 &&
		      strcmp(res.addrs, "192.0.2.5:8080") == 0,
	      "an IPv4 literal is answered at once");
	CHECK(resolve(r, "::1", 80, &res) && strcmp(res.addrs, "[::1]:80") == 0,
	      "an IPv6 literal is answered at once");
	CHECK(resolve(r, "[2001:db8::2]", 443, &res) && strcmp(res.addrs, "[2001:db8::2]:443") == 0,
	      "an IPv6 literal in brackets is answered at once");
	CHECK(resolve(r, "localhost", 80, &res) && strcmp(res.addrs, "127.0.0.1:80,[::1]:80") == 0,
	      "localhost is 127.0.0.1 then ::1, at once");
	CHECK(resolve(r, "API.LocalHost.", 81, &res) && strcmp(res.addrs, "127.0.0.1:81,[::1]:81") == 0,
	      "a name under .localhost, any case, final dot, is the loopback");
	CHECK_INT(servers[0].queries, 0, "literals and localhost send no query");
	ig_dns_resolver_free(r);
}

static void test_invalid_names(void)
{
	static const char *const bad[] = {
		"", ".", "a..b", "bad name", "a!b", "a/b", "[::1", "[nothost]",
		"0123456789012345678901234567890123456789012345678901234567890123.test",
	};
	struct dns_resolver *r = setup(ONE_NS, NULL);
	unsigned wrong = 0;
	struct result res;
	for (size_t i = 0; i < IG_COUNTOF(bad); i++)
		if (!resolve(r, bad[i], 80, &res) || res.error != DNS_FAILED ||
		    !has(res.message, "invalid host name"))
			wrong++;
	char longname[300];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	for (size_t i = 50; i < sizeof longname - 1; i += 50)
		longname[i] = '.';
	if (!resolve(r, longname, 80, &res) || res.error != DNS_FAILED)
		wrong++;
	CHECK_INT(wrong, 0, "invalid names fail at once with \"invalid host name\"");
	CHECK_INT(servers[0].queries, 0, "invalid names send no query");
	ig_dns_resolver_free(r);
}

static void test_a_and_aaaa_then_cache(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	struct result res;
	bool at_once = resolve(r, "a.test", 80, &res);
	CHECK(!at_once && res.error == 0 &&
		      strcmp(res.addrs, "192.0.2.1:80,192.0.2.2:80,[2001:db8::1]:80") == 0,
	      "A and AAAA answers: IPv4 first, then IPv6, with the port");
	CHECK_INT(servers[0].queries, 2, "one A and one AAAA question were sent");
	CHECK(resolve(r, "A.Test.", 81, &res) &&
		      strcmp(res.addrs, "192.0.2.1:81,192.0.2.2:81,[2001:db8::1]:81") == 0,
	      "the same name again is answered at once from the cache");
	CHECK_INT(servers[0].queries, 2, "the cache hit sent no query");
	/* Past the TTL (300 s): the clock is moved for the lookup only. */
	uint64_t now = loop.clock.now_ms;
	loop.clock.now_ms += 301 * 1000;
	struct dns_query *q = ig_dns_resolve(r, "a.test", 80, on_done, &res);
	loop.clock.now_ms = now;
	wait_for_dones(done_count + (q ? 1 : 0));
	CHECK(q != NULL && servers[0].queries == 4 && res.error == 0,
	      "after its TTL the name is asked again");
	CHECK(!resolve(r, "zero.test", 80, &res) && !resolve(r, "zero.test", 80, &res) &&
		      strcmp(res.addrs, "192.0.2.7:80") == 0 && servers[0].queries == 8,
	      "a TTL of 0 is not cached");
	ig_dns_resolver_free(r);
}

static void test_one_family(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	struct result res;
	resolve(r, "v4only.test", 80, &res);
	CHECK(res.error == 0 && strcmp(res.addrs, "192.0.2.4:80") == 0, "only A records: IPv4 only");
	resolve(r, "v6only.test", 80, &res);
	CHECK(res.error == 0 && strcmp(res.addrs, "[2001:db8::6]:80") == 0,
	      "only AAAA records: IPv6 only");
	ig_dns_resolver_free(r);
}

static void test_nxdomain_and_nodata(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	struct result res;
	resolve(r, "nx.test", 80, &res);
	CHECK(res.error == DNS_FAILED && strcmp(res.message, "nx.test: host not found (NXDOMAIN)") == 0,
	      "NXDOMAIN fails with \"host not found\"");
	resolve(r, "nodata.test", 80, &res);
	CHECK(res.error == DNS_FAILED && has(res.message, "nodata.test: no address"),
	      "a name without A or AAAA records fails with \"no address\"");
	resolve(r, "nx.test", 80, &res);
	CHECK(servers[0].queries >= 4 && res.error == DNS_FAILED, "failures are not cached");
	ig_dns_resolver_free(r);
}

static void test_cname(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	struct result res;
	resolve(r, "alias.test", 80, &res);
	CHECK(res.error == 0 && strcmp(res.addrs, "192.0.2.9:80") == 0,
	      "a CNAME chain in one answer is followed to its address");
	unsigned asked = servers[0].queries;
	uint64_t now = loop.clock.now_ms;
	loop.clock.now_ms += 59 * 1000;
	bool cached = ig_dns_resolve(r, "alias.test", 80, on_done, &res) == NULL;
	loop.clock.now_ms += 2 * 1000; /* past the CNAME's TTL of 60 s */
	struct dns_query *q = ig_dns_resolve(r, "alias.test", 80, on_done, &res);
	loop.clock.now_ms = now;
	wait_for_dones(done_count + (q ? 1 : 0));
	CHECK(cached && q && servers[0].queries == asked + 2 && res.error == 0,
	      "the chain is cached for the least TTL along it");
	resolve(r, "loop.test", 80, &res);
	CHECK(res.error == DNS_FAILED && has(res.message, "no address"),
	      "a CNAME loop ends without an address");
	ig_dns_resolver_free(r);
}

static void test_forgeries_ignored(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	servers[0].mode = FORGERIES_FIRST;
	struct result res;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == 0 && strcmp(res.addrs, "192.0.2.1:80,192.0.2.2:80,[2001:db8::1]:80") == 0,
	      "replies with another ID, question, type or no QR bit are ignored");
	ig_dns_resolver_free(r);
}

static void test_truncated(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	servers[0].mode = TRUNCATE;
	struct result res;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == DNS_FAILED && has(res.message, "a.test: DNS reply truncated (TC)"),
	      "a truncated reply fails clearly (no TCP fallback)");
	ig_dns_resolver_free(r);
}

static void test_malformed(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	struct result res;
	servers[0].mode = SELF_POINTER;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == DNS_FAILED &&
		      strcmp(res.message, "a.test: malformed DNS reply (2 tries, 1 nameserver)") == 0,
	      "a compression pointer that does not point back is refused");
	servers[0].mode = SHORT_RECORD;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == DNS_FAILED && has(res.message, "malformed DNS reply"),
	      "a record cut short is refused");
	ig_dns_resolver_free(r);
}

static void test_servfail_next_server(void)
{
	struct dns_resolver *r = setup("nameserver 127.0.0.1\nnameserver 127.0.0.2\n", NULL);
	servers[0].mode = SERVFAIL;
	struct result res;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == 0 && servers[0].queries >= 1 && servers[1].queries == 2,
	      "SERVFAIL moves on to the next nameserver at once");
	servers[1].mode = SERVFAIL;
	resolve(r, "v4only.test", 80, &res);
	CHECK(res.error == DNS_FAILED && has(res.message, "SERVFAIL"),
	      "SERVFAIL from every nameserver fails with that reason");
	ig_dns_resolver_free(r);
}

static void test_closed_port_next_server(void)
{
	struct dns_resolver *r = setup("nameserver 127.0.0.3\nnameserver 127.0.0.1\n", NULL);
	struct result res;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == 0 && servers[0].queries == 2,
	      "a nameserver with a closed port is left at once for the next");
	ig_dns_resolver_free(r);
}

static void test_timeout(void)
{
	struct dns_resolver *r = setup("nameserver 127.0.0.1\noptions timeout:1 attempts:2\n", NULL);
	servers[0].mode = SILENT;
	struct result res;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == DNS_FAILED &&
		      strcmp(res.message, "a.test: timed out (2 tries, 1 nameserver)") == 0,
	      "a silent nameserver times out after options attempts:2");
	CHECK(!watchdog_fired, "the timeout came from the resolver");
	CHECK_INT(servers[0].queries, 4, "each attempt asked A and AAAA again");
	CHECK(servers[0].ids[0] != servers[0].ids[2] || servers[0].ports[0] != servers[0].ports[2],
	      "a retry uses a new query ID or source port");
	ig_dns_resolver_free(r);
}

static void test_aaaa_dropped(void)
{
	/* A resolver that answers A and drops AAAA: the A addresses come
	   after a short grace, not after every try has timed out (30 s x 2,
	   beyond the watchdog). */
	struct dns_resolver *r = setup("nameserver 127.0.0.1\noptions timeout:30 attempts:2\n", NULL);
	servers[0].mode = DROP_AAAA;
	struct result res;
	resolve(r, "a.test", 80, &res);
	CHECK(!watchdog_fired && res.error == 0 && strcmp(res.addrs, "192.0.2.1:80,192.0.2.2:80") == 0,
	      "AAAA dropped: the A addresses, once a short grace for AAAA is over");
	CHECK_INT(servers[0].queries, 2, "AAAA dropped: one try, not a retry of AAAA");
	ig_dns_resolver_free(r);
}

static void test_silent_then_next(void)
{
	struct dns_resolver *r =
		setup("nameserver 127.0.0.1\nnameserver 127.0.0.2\noptions timeout:1\n", NULL);
	servers[0].mode = SILENT;
	struct result res;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == 0 && servers[0].queries == 2 && servers[1].queries == 2,
	      "after a timeout the next nameserver answers");
	ig_dns_resolver_free(r);
}

static void test_hosts_file(void)
{
	struct dns_resolver *r = setup(ONE_NS, "# test hosts\n127.0.0.1 localhost\n"
					       "10.1.2.3\thosts.test Other.Test.  # comment\n"
					       "::5 hosts.test\n"
					       "not-an-address ignored.test\n");
	struct result res;
	CHECK(resolve(r, "hosts.test", 80, &res) && strcmp(res.addrs, "10.1.2.3:80,[::5]:80") == 0,
	      "a hosts file entry wins over DNS, at once");
	CHECK(resolve(r, "other.test.", 80, &res) && strcmp(res.addrs, "10.1.2.3:80") == 0,
	      "hosts names match without case or final dot");
	CHECK_INT(servers[0].queries, 0, "hosts entries send no query");
	CHECK(!resolve(r, "ignored.test", 80, &res) && res.error == DNS_FAILED,
	      "a hosts line without a valid address is ignored");
	ig_dns_resolver_free(r);
}

static void test_missing_files(void)
{
	struct dns_resolver *r = setup(NULL, NULL);
	struct result res;
	CHECK(resolve(r, "localhost", 80, &res) && strcmp(res.addrs, "127.0.0.1:80,[::1]:80") == 0,
	      "without a hosts file localhost still resolves");
	resolve(r, "hosts.test", 80, &res);
	CHECK(res.error == 0 && strcmp(res.addrs, "192.0.2.99:80") == 0 && servers[0].queries == 2,
	      "without resolv.conf the nameserver is 127.0.0.1");
	ig_dns_resolver_free(r);
	r = setup("search example.com\noptions ndots:3 rotate\n", "");
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == 0 && servers[0].queries == 2,
	      "a resolv.conf without nameserver lines also means 127.0.0.1");
	ig_dns_resolver_free(r);
}

/* A bad INGOT_DNS_PORT stops the start (it once quietly became 53). */
static void test_bad_port_setting(void)
{
	const struct ig_settings *const parts[] = { &ig_dns_settings };
	char *no_flags[] = { "test_dns", NULL };
	struct ig_config_args args = { .argc = 1, .argv = no_flags };
	char good[16];
	snprintf(good, sizeof good, "%s", getenv("INGOT_DNS_PORT"));
	bool all_refused = true;
	for (const char *const *v = (const char *const[]){ "53x", "0", "70000", "", NULL }; *v; v++) {
		setenv("INGOT_DNS_PORT", *v, 1);
		all_refused &= ig_config_parse(parts, 1, &args) == IG_CONFIG_ERROR;
	}
	setenv("INGOT_DNS_PORT", good, 1);
	CHECK(all_refused && ig_config_parse(parts, 1, &args) == IG_CONFIG_OK && ig_dns_config.port == atoi(good),
	      "a bad INGOT_DNS_PORT (53x, 0, 70000, empty) is a settings error, not port 53");
}

/* Parses the DNS settings with INGOT_DNS_SERVER=value (NULL: unset). */
static enum ig_config_result parse_server_setting(const char *value)
{
	const struct ig_settings *const parts[] = { &ig_dns_settings };
	char *no_flags[] = { "test_dns", NULL };
	if (value)
		setenv("INGOT_DNS_SERVER", value, 1);
	else
		unsetenv("INGOT_DNS_SERVER");
	return ig_config_parse(parts, 1, &(struct ig_config_args){ .argc = 1, .argv = no_flags });
}

static void test_server_setting(void)
{
	unsigned refused = 0;
	for (const char *const *v = (const char *const[]){ "x", "127.0.0.1,nope", "1.2.3.4,1.2.3.5,1.2.3.6,1.2.3.7",
							   "300.1.2.3", NULL };
	     *v; v++)
		refused += parse_server_setting(*v) == IG_CONFIG_ERROR;
	CHECK_INT(refused, 4, "a bad INGOT_DNS_SERVER (not an address, over 3) is a settings error");
	CHECK(parse_server_setting("127.0.0.2, ::1") == IG_CONFIG_OK && ig_dns_config.servers == 2 &&
		      !ig_dns_config.server_addr[0].v6 && ig_dns_config.server_addr[1].v6,
	      "INGOT_DNS_SERVER takes a comma-separated list of IPv4 and IPv6 addresses");

	/* resolv.conf names 127.0.0.1; the setting 127.0.0.2, which wins. */
	CHECK(parse_server_setting("127.0.0.2") == IG_CONFIG_OK, "INGOT_DNS_SERVER=127.0.0.2 parses");
	struct dns_resolver *r = setup(ONE_NS, NULL);
	struct result res;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == 0 && servers[1].queries == 2 && servers[0].queries == 0,
	      "INGOT_DNS_SERVER's nameserver is asked, not resolv.conf's");
	ig_dns_resolver_free(r);
	CHECK(parse_server_setting(NULL) == IG_CONFIG_OK && ig_dns_config.servers == 0, "INGOT_DNS_SERVER unset again");
}

/* A stack that learns nameservers (as lwIP's DHCP): the kernel's UDP, and
 * the addresses this test gives it. */
static const char *stack_ns[2];
static size_t stack_ns_count, stack_ns_asked;

static size_t fake_nameservers(struct sockaddr_storage *out, size_t max)
{
	size_t n = 0;
	stack_ns_asked++;
	for (; n < stack_ns_count && n < max; n++) {
		struct sockaddr_in *s = (struct sockaddr_in *)&out[n];
		*s = (struct sockaddr_in){ .sin_family = AF_INET };
		inet_pton(AF_INET, stack_ns[n], &s->sin_addr);
	}
	return n;
}

static void test_stack_nameservers(void)
{
	struct ig_net_stack fake = ig_kernel_stack;
	fake.nameservers = fake_nameservers;
	ig_net_stack = &fake;
	struct result res;

	stack_ns_count = 0;
	struct dns_resolver *r = setup(ONE_NS, NULL);
	CHECK(resolve(r, "a.test", 80, &res) && res.error == DNS_FAILED && has(res.message, "no nameserver") &&
		      servers[0].queries == 0,
	      "a stack that has learnt no nameserver fails a lookup at once; resolv.conf's is not asked");
	stack_ns[0] = "127.0.0.2";
	stack_ns_count = 1;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == 0 && servers[1].queries == 2 && servers[0].queries == 0,
	      "the stack's nameserver, learnt later (a DHCP lease), is asked, not resolv.conf's");
	stack_ns[0] = "127.0.0.1";
	resolve(r, "v4only.test", 80, &res);
	CHECK(res.error == 0 && servers[0].queries == 2, "a nameserver the stack learns next is asked next");
	ig_dns_resolver_free(r);

	CHECK(parse_server_setting("127.0.0.2") == IG_CONFIG_OK, "INGOT_DNS_SERVER=127.0.0.2 parses");
	r = setup("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n", NULL);
	servers[1].mode = SILENT;
	size_t asked = stack_ns_asked;
	resolve(r, "a.test", 80, &res);
	CHECK(res.error == DNS_FAILED && has(res.message, "timed out (1 try, 1 nameserver)") &&
		      servers[1].queries == 2 && servers[0].queries == 0 && stack_ns_asked == asked,
	      "INGOT_DNS_SERVER wins over the stack's nameservers; resolv.conf's options still apply");
	ig_dns_resolver_free(r);
	CHECK(parse_server_setting(NULL) == IG_CONFIG_OK, "INGOT_DNS_SERVER unset again");
	ig_net_stack = &ig_kernel_stack;
}

static bool cancelled_done_ran;

static void on_cancelled_done(void *arg, int error, const struct sockaddr_storage *addrs,
			      size_t count, const char *message)
{
	(void)arg, (void)error, (void)addrs, (void)count, (void)message;
	cancelled_done_ran = true;
}

static void test_cancel(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	servers[0].mode = SILENT;
	cancelled_done_ran = false;
	int fds = open_fds();
	struct dns_query *q = ig_dns_resolve(r, "a.test", 80, on_cancelled_done, NULL);
	CHECK(q != NULL && ig_dns_resolver_pending(r) == 1 && open_fds() == fds + 1,
	      "a lookup in flight holds one query and one socket");
	if (q)
		ig_dns_cancel(q);
	CHECK(ig_dns_resolver_pending(r) == 0 && open_fds() == fds && loop.timers.armed == 0,
	      "cancel releases the query, its socket and its timer");
	servers[0].mode = SERVE;
	struct result res;
	resolve(r, "v4only.test", 80, &res);
	CHECK(res.error == 0 && !cancelled_done_ran, "a cancelled query's done never runs");
	ig_dns_resolver_free(r);
}

static void test_join(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	struct result first = { 0 }, second = { 0 }, third = { 0 };
	cancelled_done_ran = false;
	struct dns_query *q1 = ig_dns_resolve(r, "a.test", 80, on_done, &first);
	struct dns_query *q2 = ig_dns_resolve(r, "a.test", 8080, on_done, &second);
	struct dns_query *q3 = ig_dns_resolve(r, "a.test", 1, on_cancelled_done, NULL);
	struct dns_query *q4 = ig_dns_resolve(r, "a.test", 443, on_done, &third);
	CHECK(q1 && q2 && q3 && q4 && ig_dns_resolver_pending(r) == 4,
	      "queries for a name in flight join its lookup");
	if (q3)
		ig_dns_cancel(q3);
	wait_for_dones(3);
	CHECK_INT(servers[0].queries, 2, "joined queries share one A and one AAAA question");
	CHECK(strcmp(first.addrs, "192.0.2.1:80,192.0.2.2:80,[2001:db8::1]:80") == 0 &&
		      strcmp(second.addrs, "192.0.2.1:8080,192.0.2.2:8080,[2001:db8::1]:8080") == 0 &&
		      strcmp(third.addrs, "192.0.2.1:443,192.0.2.2:443,[2001:db8::1]:443") == 0,
	      "each joined query gets the addresses with its own port");
	CHECK(!cancelled_done_ran && ig_dns_resolver_pending(r) == 0,
	      "a cancelled query among joined ones is not called");
	ig_dns_resolver_free(r);
}

static void test_random_ids_and_ports(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	struct result res;
	for (int i = 0; i < 4; i++)
		resolve(r, "zero.test", 80, &res); /* TTL 0: asked every time */
	bool ids_vary = false, ports_vary = false;
	for (int i = 2; i < 8; i += 2) {
		ids_vary |= servers[0].ids[i] != servers[0].ids[0];
		ports_vary |= servers[0].ports[i] != servers[0].ports[0];
	}
	CHECK(servers[0].queries == 8 && ids_vary, "query IDs differ between lookups");
	CHECK(ports_vary, "source ports differ between lookups");
	ig_dns_resolver_free(r);
}

static void test_free_with_lookups(void)
{
	struct dns_resolver *r = setup(ONE_NS, NULL);
	servers[0].mode = SILENT;
	cancelled_done_ran = false;
	int fds = open_fds();
	ig_dns_resolve(r, "a.test", 80, on_cancelled_done, NULL);
	ig_dns_resolve(r, "v4only.test", 80, on_cancelled_done, NULL);
	ig_dns_resolver_free(r);
	CHECK(!cancelled_done_ran && open_fds() == fds && loop.timers.armed == 0,
	      "freeing a resolver ends its lookups without callbacks");
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_dns.XXXXXX");
	if (!mkdtemp(dir) || ig_loop_init(&loop, 0) != 0 || !start_servers()) {
		printf("Bail out! cannot set up the loop, servers or %s: %s\n", dir, strerror(errno));
		return 1;
	}
	char path[128], port[16];
	snprintf(path, sizeof path, "%s/resolv.conf", dir);
	setenv("INGOT_RESOLV_CONF", path, 1);
	snprintf(path, sizeof path, "%s/hosts", dir);
	setenv("INGOT_HOSTS_FILE", path, 1);
	snprintf(port, sizeof port, "%u", dns_port);
	setenv("INGOT_DNS_PORT", port, 1);
	const struct ig_settings *const parts[] = { &ig_dns_settings };
	char *no_flags[] = { "test_dns", NULL };
	if (ig_config_parse(parts, 1, &(struct ig_config_args){ .argc = 1, .argv = no_flags }) != IG_CONFIG_OK) {
		printf("Bail out! the DNS settings do not parse\n");
		return 1;
	}
	printf("# test DNS servers on 127.0.0.1:%u and 127.0.0.2:%u\n", dns_port, dns_port);

	int fds = open_fds();
	test_literals();
	test_invalid_names();
	test_a_and_aaaa_then_cache();
	test_one_family();
	test_nxdomain_and_nodata();
	test_cname();
	test_forgeries_ignored();
	test_truncated();
	test_malformed();
	test_servfail_next_server();
	test_closed_port_next_server();
	test_timeout();
	test_aaaa_dropped();
	test_silent_then_next();
	test_hosts_file();
	test_missing_files();
	test_bad_port_setting();
	test_server_setting();
	test_stack_nameservers();
	test_cancel();
	test_join();
	test_random_ids_and_ports();
	test_free_with_lookups();
	CHECK(open_fds() == fds, "no socket is left open");

	write_file("resolv.conf", NULL);
	write_file("hosts", NULL);
	rmdir(dir);
	close(servers[0].fd);
	close(servers[1].fd);
	ig_loop_close(&loop);
	return check_done();
}
