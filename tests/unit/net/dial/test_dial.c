/* Unit tests of net/dial: a real loop in this process, kernel sockets,
 * the real resolver reading the test's hosts file and resolv.conf, whose
 * one nameserver is the test's own UDP socket, which never answers. The
 * listeners are the test's, on 127.0.0.1 and a unix socket; the refused
 * address is 127.0.0.2 on the same port, bound and not listening. TLS is
 * stubbed: what is checked is how the dialer hands over the socket. */
#include "net/dial/dial.h"
#include "kernel/runtime/loop.h"
#include "net/dns/dns.h"
#include "net/dns/dns_settings.h"
#include "net/stack.h"
#include "net/tls/tls.h"
#include "tests/unit/check.h"
#include "tests/unit/fds.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

static struct ig_loop loop;
static char dir[64];

/* name's path in the test's directory (one buffer: use it at once). */
static const char *in_dir(const char *name)
{
	static char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

/* Kernel sockets only (net/stack_settings.c would choose by INGOT_NET). */
const struct ig_net_stack *ig_net_stack = &ig_kernel_stack;

/* ---- TLS, stubbed: a wrapper transport that records what it was given ---- */

static bool tls_refuse;        /* ig_tls_client fails (at max handshakes) */
static const char *no_anchors; /* ig_tls_default_trust fails with this */
static const struct tls_trust *const default_trust = (const struct tls_trust *)&default_trust;
static struct fake_tls {
	struct ig_transport up;
	struct ig_transport *lower;
	const struct tls_trust *trust;
	const struct ig_stream_ops *lower_engine_ops; /* when wrapped */
	char server_name[64];
	bool closed;
} fake_tls;

static void fake_close(struct ig_transport *t, int graceful)
{
	(void)graceful;
	struct fake_tls *f = (struct fake_tls *)t;
	f->closed = true;
	f->lower->ops->close(f->lower, 0);
}
static const struct ig_transport_ops fake_tls_ops = { .close = fake_close };

const struct tls_trust *ig_tls_default_trust(const char **err)
{
	if (no_anchors) {
		*err = no_anchors;
		return NULL;
	}
	return default_trust;
}
struct ig_tls_core *ig_tls_client_core(struct ig_loop *l) { return (struct ig_tls_core *)l; }
struct ig_transport *ig_tls_client(struct ig_tls_core *c, struct ig_transport *lower, const struct tls_trust *trust,
				   const char *server_name)
{
	(void)c;
	if (tls_refuse)
		return NULL;
	fake_tls = (struct fake_tls){ .up.ops = &fake_tls_ops, .lower = lower, .trust = trust,
				      .lower_engine_ops = lower->engine_ops };
	snprintf(fake_tls.server_name, sizeof fake_tls.server_name, "%s", server_name ? server_name : "");
	return &fake_tls.up;
}

/* ---- the owner's side ---- */

static char *eng_lend(void *e, size_t *cap)
{
	static char sink[64];
	(void)e;
	*cap = sizeof sink;
	return sink;
}
static void eng_received(void *e, size_t n) { (void)e, (void)n; }
static void eng_writable(void *e) { (void)e; }
static void eng_closed(void *e) { (void)e; }
static const struct ig_stream_ops engine = { eng_lend, eng_received, eng_writable, eng_closed };

struct outcome {
	int calls;
	bool connected;
	enum ig_dial_error kind;
	enum ig_dial_state state; /* at the callback */
	char why[160];
	char where[IG_PEER_TEXT_MAX];
	struct ig_transport *t, *sock;
};

static void on_connected(struct ig_dial *d, struct ig_transport *t, struct ig_transport *sock, void *arg)
{
	struct outcome *o = arg;
	o->calls++;
	o->connected = true;
	o->t = t;
	o->sock = sock;
	ig_dial_address_text(d, o->where, sizeof o->where);
	t->engine_ops = &engine;
	t->engine = o;
	loop.running = false;
}

static void on_failed(struct ig_dial *d, enum ig_dial_error kind, const char *why, void *arg)
{
	struct outcome *o = arg;
	o->calls++;
	o->kind = kind;
	o->state = d->state;
	snprintf(o->why, sizeof o->why, "%s", why);
	ig_dial_address_text(d, o->where, sizeof o->where);
	loop.running = false;
}

static const struct ig_dial_ops ops = { on_connected, on_failed };

static bool watchdog_fired;
static void on_watchdog(struct ig_timer *t)
{
	(void)t;
	watchdog_fired = true;
	loop.running = false;
}

/* Starts a dial and runs the loop until its callback (a guard stops it
 * after 30 s, which fails the check instead of hanging). */
static void dial(struct ig_dial *d, const struct ig_dial_params *p, struct outcome *o)
{
	*o = (struct outcome){ 0 };
	ig_clock_update(&loop.clock);
	ig_dial_start(d, &loop, p, &ops, o);
	if (o->calls)
		return;
	struct ig_timer watchdog = { .fn = on_watchdog };
	ig_timer_set(&loop.timers, &watchdog, loop.clock.now_ms + 30000);
	ig_loop_run(&loop);
	ig_timer_cancel(&loop.timers, &watchdog);
}

static void close_stream(struct outcome *o)
{
	if (o->connected)
		o->t->ops->close(o->t, 0);
	ig_loop_run_deferred(&loop);
}

/* ---- the test's sockets ---- */

static uint16_t port; /* the listener's, on 127.0.0.1 */
static int listener, refuser, unix_listener, nameserver;
static struct sockaddr_un unix_addr;

static int tcp_socket(const char *ip, uint16_t at, bool listening)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(at) };
	inet_pton(AF_INET, ip, &a.sin_addr);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && (!listening || listen(fd, 16) == 0))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

static uint16_t port_of(int fd, int type)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	(void)type;
	return getsockname(fd, (struct sockaddr *)&a, &len) == 0 ? ntohs(a.sin_port) : 0;
}

/* The listener on 127.0.0.1:port, and 127.0.0.2:port bound but not
 * listening, so that a connect to it is refused. */
static bool start_sockets(void)
{
	for (int tries = 0; tries < 20; tries++) {
		listener = tcp_socket("127.0.0.1", 0, true);
		if (listener < 0)
			return false;
		port = port_of(listener, SOCK_STREAM);
		refuser = tcp_socket("127.0.0.2", port, false);
		if (refuser >= 0)
			break;
		close(listener);
		listener = -1;
	}
	if (refuser < 0)
		return false;
	unix_listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	unix_addr.sun_family = AF_UNIX;
	snprintf(unix_addr.sun_path, sizeof unix_addr.sun_path, "%s/db.sock", dir);
	if (unix_listener < 0 || bind(unix_listener, (struct sockaddr *)&unix_addr, sizeof unix_addr) != 0 ||
	    listen(unix_listener, 4) != 0)
		return false;
	nameserver = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	return nameserver >= 0 && bind(nameserver, (struct sockaddr *)&a, sizeof a) == 0;
}

/* Connections waiting in fd's backlog, each accepted and closed. */
static int accept_all(int fd)
{
	int n = 0, c;
	while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		close(c);
		n++;
	}
	return n;
}

/* Queries that reached the silent nameserver, read and dropped. */
static int queries_heard(void)
{
	char buf[512];
	int n = 0;
	while (recv(nameserver, buf, sizeof buf, 0) >= 0)
		n++;
	return n;
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(in_dir(name), "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool has(const char *s, const char *part) { return strstr(s, part) != NULL; }

/* ---- the tests ---- */

static struct sock_core sc;
static struct ig_dial d;
static char listening[64], refusing[64]; /* "127.0.0.1:port", "127.0.0.2:port" */

/* Dials host at the test's port, plain, within timeout_ms. */
static void dial_host(const char *host, uint32_t timeout_ms, struct outcome *o)
{
	dial(&d, &(struct ig_dial_params){ .sock = &sc, .host = host, .port = port, .timeout_ms = timeout_ms }, o);
}

static void test_literal(void)
{
	struct outcome o;
	dial_host("127.0.0.1", 5000, &o);
	CHECK(o.calls == 1 && o.connected && o.t == o.sock, "a literal address connects, plain");
	check_that(strcmp(o.where, listening) == 0, "the dial says where it connected", "\"%s\", want \"%s\"", o.where,
		   listening);
	CHECK_INT(accept_all(listener), 1, "the listener has the one connection");
	CHECK_INT(loop.timers.armed, 0, "the deadline's timer is cancelled once connected");
	ig_dial_cancel(&d);
	CHECK(o.t->engine == &o, "a cancel after connected leaves the owner's stream alone");
	close_stream(&o);
}

static void test_hosts_name(void)
{
	struct outcome o;
	dial_host("one.test", 5000, &o);
	CHECK(o.connected && strcmp(o.where, listening) == 0, "a name from the hosts file connects");
	CHECK_INT(queries_heard(), 0, "a hosts entry sends no query");
	CHECK_INT(accept_all(listener), 1, "its connection reached the listener");
	close_stream(&o);
}

static void test_refused_then_next(void)
{
	struct outcome o;
	dial_host("two.test", 5000, &o);
	check_that(o.calls == 1 && o.connected && strcmp(o.where, listening) == 0,
		   "the first address refused, the next one connects", "calls %d, connected %d, at \"%s\" (%s)",
		   o.calls, o.connected, o.where, o.why);
	CHECK_INT(accept_all(listener), 1, "one connection reached the listener");
	close_stream(&o);

	dial_host("refused.test", 5000, &o);
	check_that(o.calls == 1 && !o.connected && o.kind == IG_DIAL_CONNECT && strcmp(o.why, strerror(ECONNREFUSED)) == 0,
		   "every address refused: the dial fails with the last one's error", "kind %d, why \"%s\"", o.kind,
		   o.why);
	check_that(strcmp(o.where, refusing) == 0, "and names that address", "\"%s\", want \"%s\"", o.where, refusing);
	CHECK_INT(loop.timers.armed, 0, "a failed dial leaves no timer");
}

static void test_given_address(void)
{
	struct outcome o;
	dial(&d, &(struct ig_dial_params){ .sock = &sc, .host = "ignored.test", .addr = (struct sockaddr *)&unix_addr,
					    .addr_len = sizeof unix_addr, .timeout_ms = 5000 }, &o);
	CHECK(o.connected && strcmp(o.where, unix_addr.sun_path) == 0, "a given address (a unix socket) connects, no lookup");
	socklen_t len = 0;
	const struct sockaddr *a = ig_dial_address(&d, &len);
	CHECK(a && a->sa_family == AF_UNIX && len == sizeof unix_addr, "ig_dial_address gives it back, for a cancel request");
	CHECK_INT(accept_all(unix_listener), 1, "the unix listener has the connection");
	CHECK_INT(queries_heard(), 0, "and nothing was looked up");
	close_stream(&o);
}

static void test_invalid_name(void)
{
	struct outcome o = { 0 };
	ig_dial_start(&d, &loop, &(struct ig_dial_params){ .sock = &sc, .host = "bad..name", .port = port, .timeout_ms = 5000 },
		      &ops, &o);
	check_that(o.calls == 1 && o.kind == IG_DIAL_RESOLVE && has(o.why, "bad..name") && has(o.why, "invalid host name"),
		   "an invalid name fails at once, the resolver's message naming it", "calls %d, kind %d, why \"%s\"",
		   o.calls, o.kind, o.why);
	CHECK_INT(loop.timers.armed, 0, "and leaves no timer");
}

static void test_timeout(void)
{
	struct outcome o;
	dial_host("silent.test", 40, &o);
	check_that(o.calls == 1 && !o.connected && o.kind == IG_DIAL_TIMEOUT && o.state == IG_DIAL_RESOLVING,
		   "a nameserver that never answers: the dial's deadline fails it, during the lookup",
		   "calls %d, kind %d, state %d, watchdog %d", o.calls, o.kind, o.state, watchdog_fired);
	CHECK(queries_heard() >= 1, "the lookup did ask the nameserver");
	CHECK_INT(ig_dns_resolver_pending(ig_dial_resolver(&loop)), 0, "the timed-out lookup is withdrawn");
	CHECK_INT(loop.timers.armed, 0, "nothing is left armed (the resolver's retry included)");
}

static void test_cancel(void)
{
	struct outcome o = { 0 };
	ig_dial_start(&d, &loop, &(struct ig_dial_params){ .sock = &sc, .host = "silent.test", .port = port, .timeout_ms = 5000 },
		      &ops, &o);
	CHECK(o.calls == 0 && d.state == IG_DIAL_RESOLVING && ig_dns_resolver_pending(ig_dial_resolver(&loop)) == 1,
	      "a lookup under way");
	ig_dial_cancel(&d);
	CHECK(ig_dns_resolver_pending(ig_dial_resolver(&loop)) == 0 && loop.timers.armed == 0 && d.state == IG_DIAL_IDLE,
	      "a cancel withdraws the lookup and the deadline: no callback can follow");
	CHECK_INT(o.calls, 0, "and none ran");
	queries_heard();

	ig_dial_start(&d, &loop, &(struct ig_dial_params){ .sock = &sc, .host = "127.0.0.1", .port = port, .timeout_ms = 5000 },
		      &ops, &o);
	CHECK(d.state == IG_DIAL_CONNECTING && d.sock, "a connect under way");
	ig_dial_cancel(&d);
	CHECK(!d.sock && loop.timers.armed == 0 && o.calls == 0, "a cancel closes its socket, with no callback");
	ig_loop_run_deferred(&loop);
	accept_all(listener);
}

static void test_one_resolver(void)
{
	struct dns_resolver *r = ig_dial_resolver(&loop);
	CHECK(r && ig_dial_resolver(&loop) == r, "one resolver per core, made once");
}

static void test_tls(void)
{
	struct outcome o;
	struct ig_dial_tls tls = { .verify = true, .server_name = "one.test" };
	struct ig_dial_params p = { .sock = &sc, .host = "one.test", .port = port, .timeout_ms = 5000, .tls = &tls };
	dial(&d, &p, &o);
	CHECK(o.connected && o.t == &fake_tls.up && o.sock == fake_tls.lower && o.t != o.sock,
	      "with TLS asked, connected gives TLS over the socket");
	CHECK(fake_tls.lower_engine_ops == NULL && fake_tls.trust == default_trust && strcmp(fake_tls.server_name, "one.test") == 0,
	      "TLS got the socket without an engine, the default anchors and the server name");
	CHECK(o.t->engine_ops == &engine, "the owner's engine sits on TLS");
	close_stream(&o);
	CHECK(fake_tls.closed && accept_all(listener) == 1, "closing TLS closes the socket");

	tls_refuse = true;
	dial(&d, &p, &o);
	check_that(o.calls == 1 && o.kind == IG_DIAL_TLS && strcmp(o.why, "too many handshakes") == 0,
		   "TLS that cannot start fails the dial", "kind %d, why \"%s\"", o.kind, o.why);
	tls_refuse = false;
	ig_loop_run_deferred(&loop);
	accept_all(listener);

	no_anchors = "no anchors here";
	dial(&d, &p, &o);
	CHECK(o.kind == IG_DIAL_TLS && strcmp(o.why, "no anchors here") == 0, "no default anchors: why says so");
	no_anchors = NULL;
	ig_loop_run_deferred(&loop);
	accept_all(listener);

	/* PostgreSQL's order: plain first, TLS after the SSLRequest. */
	dial_host("127.0.0.1", 5000, &o);
	const char *why = NULL;
	struct ig_dial_tls no_verify = { .verify = false, .server_name = "db.test" };
	struct ig_transport *t = ig_dial_tls(&loop, o.sock, &no_verify, &why);
	CHECK(t == &fake_tls.up && fake_tls.trust == NULL && t->engine_ops == &engine && t->engine == &o &&
		      o.sock->engine_ops == NULL,
	      "ig_dial_tls later: the engine moves onto TLS, no anchors when not verifying");
	o.t = t;
	close_stream(&o);
	accept_all(listener);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(dir, sizeof dir, "/tmp/test_dial.XXXXXX");
	if (!mkdtemp(dir) || ig_loop_init(&loop, 0) != 0 || !start_sockets()) {
		printf("Bail out! cannot set up the loop, sockets or %s: %s\n", dir, strerror(errno));
		return 1;
	}
	ig_sock_core_init(&sc, &loop, -1, 64, NULL, NULL);
	char ns_port[16];
	write_file("resolv.conf", "nameserver 127.0.0.1\noptions timeout:30\n");
	write_file("hosts", "127.0.0.1 one.test\n127.0.0.2 two.test\n127.0.0.1 two.test\n127.0.0.2 refused.test\n");
	setenv("INGOT_RESOLV_CONF", in_dir("resolv.conf"), 1);
	setenv("INGOT_HOSTS_FILE", in_dir("hosts"), 1);
	snprintf(ns_port, sizeof ns_port, "%u", port_of(nameserver, SOCK_DGRAM));
	setenv("INGOT_DNS_PORT", ns_port, 1);
	const struct ig_settings *const parts[] = { &ig_dns_settings };
	char *no_flags[] = { "test_dial", NULL };
	if (ig_config_parse(parts, 1, &(struct ig_config_args){ .argc = 1, .argv = no_flags }) != IG_CONFIG_OK) {
		printf("Bail out! the DNS settings do not parse\n");
		return 1;
	}
	snprintf(listening, sizeof listening, "127.0.0.1:%u", port);
	snprintf(refusing, sizeof refusing, "127.0.0.2:%u", port);
	printf("# listener on %s, refused at %s, silent nameserver on port %s\n", listening, refusing, ns_port);

	int fds = open_fds();
	test_literal();
	test_hosts_name();
	test_refused_then_next();
	test_given_address();
	test_invalid_name();
	test_timeout();
	test_cancel();
	test_one_resolver();
	test_tls();
	ig_loop_run_deferred(&loop);
	/* The resolver lives as long as the core (its files read, its cache);
	   it keeps no socket between lookups. */
	CHECK(open_fds() == fds, "no socket is left open");

	unlink(unix_addr.sun_path);
	unlink(in_dir("resolv.conf"));
	unlink(in_dir("hosts"));
	rmdir(dir);
	close(listener);
	close(refuser);
	close(unix_listener);
	close(nameserver);
	ig_loop_close(&loop);
	return check_done();
}
