/* The startup phase of a connection, once its transport is up (TLS
 * included): StartupMessage, authentication (trust, cleartext, md5,
 * SCRAM-SHA-256), BackendKeyData for CancelRequests, and the first
 * ReadyForQuery, which tells the owner the connection is up. */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

void ig_pg_startup_send(struct pg_conn *k)
{
	const struct pg_conninfo *ci = &ig_pg_global->ci;
	ig_pg_put_startup(&k->out, ci->user, ci->dbname, ci->application_name);
	ig_pg_conn_schedule_flush(k);
}

static void auth_fail(struct pg_conn *k, enum ig_pg_error_kind kind, const char *message)
{
	ig_pg_conn_close(k, kind, message);
}

static void on_auth(struct pg_conn *k, const struct pg_msg *m)
{
	struct pg_auth a;
	if (!ig_pg_read_auth(m, &a)) {
		auth_fail(k, IG_PG_PROTOCOL, "malformed authentication request");
		return;
	}
	const struct pg_conninfo *ci = &ig_pg_global->ci;
	switch (a.code) {
	case PG_AUTH_OK:
		return;
	case PG_AUTH_CLEARTEXT:
		ig_pg_put_password(&k->out, ci->password);
		break;
	case PG_AUTH_MD5: {
		char out[36];
		ig_pg_md5_password(ci->user, ci->password, a.salt, out);
		ig_pg_put_password(&k->out, out);
		memset(out, 0, sizeof out);
		break;
	}
	case PG_AUTH_SASL: {
		if (!a.scram_sha256) {
			auth_fail(k, IG_PG_AUTH, "the server offers no SASL mechanism this client supports");
			return;
		}
		uint8_t rnd[PG_SCRAM_NONCE_RANDOM];
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
			auth_fail(k, IG_PG_AUTH, "no random bytes for SCRAM's nonce");
			return;
		}
		char first[PG_SCRAM_FIRST_MAX];
		size_t n = ig_pg_scram_client_first(&k->scram, rnd, first, sizeof first);
		if (!n) {
			auth_fail(k, IG_PG_AUTH, "SCRAM: cannot start");
			return;
		}
		ig_pg_put_sasl_initial(&k->out, PG_SCRAM_MECHANISM, first, n);
		break;
	}
	case PG_AUTH_SASL_CONTINUE: {
		char final[PG_SCRAM_FINAL_MAX];
		size_t n = 0;
		enum pg_scram_status st = ig_pg_scram_client_final(&k->scram, ci->password, a.data, a.data_len, final,
								sizeof final, &n);
		if (st != PG_SCRAM_OK) {
			auth_fail(k, IG_PG_AUTH, ig_pg_scram_status_text(st));
			return;
		}
		ig_pg_put_sasl_response(&k->out, final, n);
		memset(final, 0, sizeof final);
		break;
	}
	case PG_AUTH_SASL_FINAL: {
		enum pg_scram_status st = ig_pg_scram_verify_server_final(&k->scram, a.data, a.data_len);
		if (st != PG_SCRAM_OK)
			auth_fail(k, IG_PG_AUTH, ig_pg_scram_status_text(st));
		return;
	}
	default:
		auth_fail(k, IG_PG_AUTH, "the server asks for an authentication method this client does not support");
		return;
	}
	ig_pg_conn_schedule_flush(k);
}

/* The server's words (the core's startup_error) for the pool's log and
 * its waiters never hold the password: the server never repeats it. */

void ig_pg_startup_message(struct pg_conn *k, const struct pg_msg *m)
{
	switch (m->type) {
	case PG_MSG_AUTH:
		on_auth(k, m);
		return;
	case PG_MSG_BACKEND_KEY:
		if (!ig_pg_read_backend_key(m, &k->pid, &k->key))
			ig_pg_conn_close(k, IG_PG_PROTOCOL, "malformed BackendKeyData");
		return;
	case PG_MSG_PARAMETER_STATUS:
	case PG_MSG_NOTICE:
	case PG_MSG_NEGOTIATE_VERSION:
		return;
	case PG_MSG_ERROR: {
		struct pg_error_fields e;
		if (!ig_pg_read_error(m, &e)) {
			ig_pg_conn_close(k, IG_PG_PROTOCOL, "malformed ErrorResponse");
			return;
		}
		char *why = k->core->startup_error;
		snprintf(why, sizeof k->core->startup_error, "%.*s (SQLSTATE %s)", (int)e.message.len,
			 e.message.ptr ? e.message.ptr : "", e.sqlstate);
		bool auth = e.sqlstate[0] == '2' && e.sqlstate[1] == '8';
		ig_pg_conn_close(k, auth ? IG_PG_AUTH : IG_PG_CONNECT, why);
		return;
	}
	case PG_MSG_READY:
		if (!ig_pg_read_ready(m, &k->tx_status)) {
			ig_pg_conn_close(k, IG_PG_PROTOCOL, "malformed ReadyForQuery");
			return;
		}
		if (k->scram.step != 0 && k->scram.step != 3) {
			/* SCRAM started but the server never proved itself. */
			ig_pg_conn_close(k, IG_PG_AUTH, "SCRAM: the server did not complete the exchange");
			return;
		}
		k->state = PGC_READY;
		ig_timer_cancel(&k->core->loop->timers, &k->timer);
		memset(&k->scram, 0, sizeof k->scram);
		k->owner_ops->up(k->owner, k);
		return;
	default:
		ig_pg_conn_close(k, IG_PG_PROTOCOL, "unexpected message during startup");
	}
}
