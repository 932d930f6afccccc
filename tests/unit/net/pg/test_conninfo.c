/* Unit tests of net/pg/conninfo: libpq's URI forms (users, passwords,
 * %-escapes, IPv6, unix socket directories, parameters), the PG* variables
 * as the fallback and the defaults, every refusal with its status, and the
 * password absent from every error text and from the redacted form. */
#include "net/pg/conninfo.h"
#include "tests/unit/check.h"

#include <string.h>

static struct pg_conninfo ci;
static char err[256];

static int parse(const char *url, const char *const *env)
{
	return ig_pg_conninfo_parse(&ci, url, env, err, sizeof err);
}

static void test_urls(void)
{
	static const char *const none[] = { NULL };
	CHECK_INT(parse("postgresql://bob:s3cret@db.example.com:6543/shop?sslmode=require&application_name=api", none),
		  PG_CONNINFO_OK, "a full URL parses");
	CHECK(strcmp(ci.user, "bob") == 0 && strcmp(ci.password, "s3cret") == 0 &&
		      strcmp(ci.host, "db.example.com") == 0 && ci.port == 6543 && strcmp(ci.dbname, "shop") == 0 &&
		      ci.sslmode == PG_SSL_REQUIRE && strcmp(ci.application_name, "api") == 0 && !ci.unix_socket,
	      "user, password, host, port, dbname, sslmode, application_name");

	CHECK_INT(parse("postgres://u%40x:p%3Aw%2F%25@127.0.0.1/d%20b", none), PG_CONNINFO_OK, "postgres:// with escapes");
	CHECK(strcmp(ci.user, "u@x") == 0 && strcmp(ci.password, "p:w/%") == 0 && strcmp(ci.dbname, "d b") == 0 &&
		      ci.port == 5432,
	      "%-escapes decoded in user, password and dbname; port 5432 by default");

	CHECK_INT(parse("postgresql://a@[::1]:7000/x", none), PG_CONNINFO_OK, "an IPv6 host in brackets");
	CHECK(strcmp(ci.host, "::1") == 0 && ci.port == 7000, "the brackets are not part of the host");

	CHECK_INT(parse("postgresql://ingot@/ingot?host=/tmp/pg%20dir&port=5555", none), PG_CONNINFO_OK,
		  "a unix socket directory in ?host=");
	CHECK(ci.unix_socket && strcmp(ci.host, "/tmp/pg dir") == 0 && ci.port == 5555, "socket directory and port");

	CHECK_INT(parse("postgresql://%2Fvar%2Frun%2Fpg/db", none), PG_CONNINFO_OK, "a %-encoded socket directory as host");
	CHECK(ci.unix_socket && strcmp(ci.host, "/var/run/pg") == 0, "...is a unix socket");

	CHECK_INT(parse("postgresql://h/db?sslmode=verify-full&sslrootcert=/etc/ca.pem&connect_timeout=3", none),
		  PG_CONNINFO_OK, "sslrootcert and connect_timeout");
	CHECK(ci.sslmode == PG_SSL_VERIFY_FULL && strcmp(ci.sslrootcert, "/etc/ca.pem") == 0 &&
		      ci.connect_timeout_ms == 3000,
	      "verify-full, the CA file, 3 s in ms");
	CHECK_INT(parse("postgresql://h?sslmode=allow", none), PG_CONNINFO_OK, "sslmode=allow is accepted");
	CHECK(ci.sslmode == PG_SSL_PREFER, "...as prefer");
	CHECK_INT(parse("postgresql://", none), PG_CONNINFO_OK, "an empty URL takes every default");
	CHECK(strcmp(ci.host, PG_DEFAULT_SOCKET_DIR) == 0 && ci.unix_socket && ci.port == 5432 &&
		      strcmp(ci.user, "postgres") == 0 && strcmp(ci.dbname, "postgres") == 0 &&
		      ci.sslmode == PG_SSL_PREFER && ci.password[0] == 0,
	      "defaults: the socket directory, 5432, postgres, prefer, no password");
	CHECK_INT(parse("postgresql://h:5432/", none), PG_CONNINFO_OK, "a trailing / without a database");
}

static void test_env(void)
{
	static const char *const env[] = { "HOME=/root",          "PGHOST=envhost",     "PGPORT=6000",
					   "PGUSER=envuser",      "PGPASSWORD=envpw",   "PGDATABASE=envdb",
					   "PGSSLMODE=disable",   "PGAPPNAME=envapp",   "PGSSLROOTCERT=/ca",
					   "PGCONNECT_TIMEOUT=7", "PGHOSTX=nothing",    NULL };
	CHECK_INT(parse(NULL, env), PG_CONNINFO_OK, "no URL: the environment alone");
	CHECK(strcmp(ci.host, "envhost") == 0 && ci.port == 6000 && strcmp(ci.user, "envuser") == 0 &&
		      strcmp(ci.password, "envpw") == 0 && strcmp(ci.dbname, "envdb") == 0 &&
		      ci.sslmode == PG_SSL_DISABLE && strcmp(ci.application_name, "envapp") == 0 &&
		      strcmp(ci.sslrootcert, "/ca") == 0 && ci.connect_timeout_ms == 7000,
	      "every PG* variable is read");
	CHECK_INT(parse("postgresql://urluser@urlhost/urldb", env), PG_CONNINFO_OK, "a URL with the environment");
	CHECK(strcmp(ci.user, "urluser") == 0 && strcmp(ci.host, "urlhost") == 0 && strcmp(ci.dbname, "urldb") == 0 &&
		      strcmp(ci.password, "envpw") == 0 && ci.port == 6000,
	      "what the URL gives wins; the rest comes from the environment");
	static const char *const user_only[] = { "USER=alice", NULL };
	CHECK_INT(parse(NULL, user_only), PG_CONNINFO_OK, "only USER");
	CHECK(strcmp(ci.user, "alice") == 0 && strcmp(ci.dbname, "alice") == 0, "USER is the user and the database");
	static const char *const bad_port[] = { "PGPORT=99999", NULL };
	CHECK(parse(NULL, bad_port) == PG_CONNINFO_BAD_SYNTAX && strstr(err, "PGPORT"),
	      "a bad PGPORT is refused, naming the variable");

	static const char *const nothing[] = { "HOME=/", NULL }, *const host[] = { "PGHOST=/tmp", NULL },
				 *const db[] = { "PGDATABASE=x", NULL }, *const empty_host[] = { "PGHOST=", NULL };
	CHECK(!ig_pg_conninfo_configured(NULL, nothing) && !ig_pg_conninfo_configured("", NULL) &&
		      !ig_pg_conninfo_configured(NULL, empty_host),
	      "not configured: no URL, no PGHOST, no PGDATABASE (an empty one counts as none)");
	CHECK(ig_pg_conninfo_configured("postgresql://h", nothing) && ig_pg_conninfo_configured(NULL, host) &&
		      ig_pg_conninfo_configured(NULL, db),
	      "configured: a URL, PGHOST or PGDATABASE");
}

static void test_refusals(void)
{
	static const char *const none[] = { NULL };
	static const struct {
		const char *url;
		int status;
		const char *name;
	} cases[] = {
		{ "mysql://u:topsecret@h/db", PG_CONNINFO_BAD_SCHEME, "another scheme" },
		{ "postgresql://u:topsecret@h/db?sslmode=verify-ca", PG_CONNINFO_UNSUPPORTED, "sslmode=verify-ca" },
		{ "postgresql://u:topsecret@h/db?sslmode=sometimes", PG_CONNINFO_BAD_SYNTAX, "an unknown sslmode" },
		{ "postgresql://u:topsecret@h/db?target_session_attrs=any", PG_CONNINFO_UNKNOWN_PARAM,
		  "an unknown parameter" },
		{ "postgresql://u:topsecret@h1,h2/db", PG_CONNINFO_UNSUPPORTED, "several hosts" },
		{ "postgresql://u:topsecret@h:0/db", PG_CONNINFO_BAD_SYNTAX, "port 0" },
		{ "postgresql://u:topsecret@h:65536/db", PG_CONNINFO_BAD_SYNTAX, "port 65536" },
		{ "postgresql://u:topsecret@h:54x/db", PG_CONNINFO_BAD_SYNTAX, "a port with a letter" },
		{ "postgresql://u:topsecret@[::1/db", PG_CONNINFO_BAD_SYNTAX, "an unclosed bracket" },
		{ "postgresql://u:topsecret@[::1]x/db", PG_CONNINFO_BAD_SYNTAX, "text after the bracket" },
		{ "postgresql://u:top%zzsecret@h/db", PG_CONNINFO_BAD_SYNTAX, "a bad %-escape in the password" },
		{ "postgresql://u:top%00secret@h/db", PG_CONNINFO_BAD_SYNTAX, "an encoded NUL" },
		{ "postgresql://u:topsecret@h/db?sslmode", PG_CONNINFO_BAD_SYNTAX, "a parameter without =" },
		{ "postgresql://u:topsecret@h/db?connect_timeout=-1", PG_CONNINFO_BAD_SYNTAX, "a negative timeout" },
		{ "postgresql://u:topsecret@h/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  PG_CONNINFO_TOO_LONG, "a database name over 63 bytes" },
	};
	bool never_leaks = true;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int st = parse(cases[i].url, none);
		CHECK(st == cases[i].status && err[0] != 0, cases[i].name);
		if (st != cases[i].status)
			printf("# got %d (%s)\n", st, err);
		never_leaks &= strstr(err, "secret") == NULL && strstr(err, "top") == NULL;
	}
	CHECK(never_leaks, "no error text holds any part of the password");
}

static void test_redacted(void)
{
	static const char *const none[] = { NULL };
	char buf[512];
	parse("postgresql://bob:hunter2@db:6000/shop?sslmode=verify-full", none);
	size_t n = ig_pg_conninfo_redacted(&ci, buf, sizeof buf);
	check_slice(buf, n, "postgresql://bob:***@db:6000/shop?sslmode=verify-full", "redacted: the password is ***",
		    "redacted");
	parse("postgresql://bob@/shop?host=/tmp/s&port=7&application_name=x", none);
	n = ig_pg_conninfo_redacted(&ci, buf, sizeof buf);
	check_slice(buf, n, "postgresql://bob@/shop?host=/tmp/s&port=7&sslmode=prefer&application_name=x",
		    "redacted: a unix socket, no password", "redacted");
	parse("postgresql://bob:pw@[::1]/d", none);
	n = ig_pg_conninfo_redacted(&ci, buf, sizeof buf);
	check_slice(buf, n, "postgresql://bob:***@[::1]:5432/d?sslmode=prefer", "redacted: IPv6 in brackets",
		    "redacted");
	n = ig_pg_conninfo_redacted(&ci, buf, 10);
	CHECK(n == 9 && buf[9] == 0, "redacted: truncated to the buffer, NUL-terminated");
	CHECK(strcmp(ig_pg_sslmode_name(PG_SSL_VERIFY_FULL), "verify-full") == 0 &&
		      strcmp(ig_pg_sslmode_name(PG_SSL_DISABLE), "disable") == 0,
	      "sslmode names as libpq spells them");
}

int main(void)
{
	test_urls();
	test_env();
	test_refusals();
	test_redacted();
	return check_done();
}
