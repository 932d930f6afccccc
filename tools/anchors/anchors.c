/* Generates the compiled-in trust anchors (net/tls/anchors.h) from Debian's
 * ca-certificates source: the certificates its certdata2pem.py and Makefile
 * would ship, decoded with BearSSL into DN + public key (as "brssl ta"
 * does) and kept whole in DER for backends that want certificates.
 *   anchors MOZILLA_DIR OUT.c
 * MOZILLA_DIR holds certdata.txt, blacklist.txt and extra/ (the package's
 * mozilla/ directory). The output depends only on those files. */
#ifndef _DEFAULT_SOURCE /* scandir, alphasort under -std=c11 */
#define _DEFAULT_SOURCE
#endif
#include "kernel/runtime/file.h"
#include "kernel/runtime/lz.h"
#include "tools/schemac/lz_pack.h"
#include "net/tls/anchors.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bearssl.h>

/* ---- small helpers (a host tool: any failure ends the run) ---- */

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("anchors: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *d = xrealloc(NULL, n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

struct bytes {
	unsigned char *data;
	size_t len, cap;
};

static void bytes_put(struct bytes *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2;
		b->data = xrealloc(b->data, b->cap);
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

/* The whole file, NUL-terminated; NULL if it does not exist. */
static char *read_file(const char *path, size_t *len)
{
	char err[512];
	char *text = ig_read_file(path, (size_t)1 << 30, 0, len, err, sizeof err);
	if (!text && errno != ENOENT)
		die("%s", err);
	return text;
}

/* ---- certdata.txt, read the way certdata2pem.py reads it ---- */

/* The four attributes the selection needs; the rest are ignored. A label
 * keeps its quotes, as in the script (blacklist.txt lists it quoted). */
struct object {
	char *class, *label, *server_auth;
	struct bytes value; /* CKA_VALUE: the DER certificate */
	unsigned line;      /* where the object starts, for messages */
};

struct objects {
	struct object *v;
	size_t n;
};

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n' && s[i] != '\v' && s[i] != '\f')
			return false;
	return true;
}

/* Appends every "\ooo" escape of the line (first digit 0-3) to out. */
static void append_octal(struct bytes *out, const char *s, size_t n)
{
	for (size_t i = 0; i + 3 < n; i++) {
		if (s[i] != '\\' || s[i + 1] < '0' || s[i + 1] > '3' || s[i + 2] < '0' ||
		    s[i + 2] > '7' || s[i + 3] < '0' || s[i + 3] > '7')
			continue;
		unsigned char c = (unsigned char)((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
		bytes_put(out, &c, 1);
		i += 3;
	}
}

static void set_attr(struct object *o, const char *field, const char *value)
{
	char **slot = strcmp(field, "CKA_CLASS") == 0               ? &o->class
		      : strcmp(field, "CKA_LABEL") == 0             ? &o->label
		      : strcmp(field, "CKA_TRUST_SERVER_AUTH") == 0 ? &o->server_auth
								    : NULL;
	if (!slot)
		return;
	free(*slot);
	*slot = value ? xstrndup(value, strlen(value)) : NULL;
}

/* Objects are separated by blank lines; "#" lines are skipped everywhere
 * (also inside a MULTILINE_OCTAL value), as the script does. */
static struct objects parse_certdata(char *text)
{
	struct objects all = {0};
	struct object cur = {0};
	bool in_data = false, in_obj = false, in_multiline = false, value_is_der = false;
	unsigned lineno = 0;
	for (char *line = text; *line;) {
		char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		char *next = eol ? eol + 1 : line + n;
		lineno++;
		if (!in_data) {
			in_data = starts_with(line, "BEGINDATA");
		} else if (line[0] == '#') {
			/* comment */
		} else if (blank(line, n)) {
			if (in_obj) {
				all.v = xrealloc(all.v, (all.n + 1) * sizeof *all.v);
				all.v[all.n++] = cur;
				memset(&cur, 0, sizeof cur);
				in_obj = false;
			}
		} else if (in_multiline) {
			if (starts_with(line, "END"))
				in_multiline = false;
			else if (value_is_der)
				append_octal(&cur.value, line, n);
		} else {
			if (starts_with(line, "CKA_CLASS")) {
				in_obj = true;
				cur.line = lineno;
			}
			/* strip(), then split(' ', 2): field, type, value */
			while (n && blank(line + n - 1, 1))
				n--;
			while (n && blank(line, 1))
				line++, n--;
			char *copy = xstrndup(line, n);
			char *type = strchr(copy, ' ');
			if (!type)
				die("certdata.txt:%u: a line with one word", lineno);
			*type++ = 0;
			char *value = strchr(type, ' ');
			if (value)
				*value++ = 0;
			if (strcmp(type, "MULTILINE_OCTAL") == 0) {
				in_multiline = true;
				value_is_der = strcmp(copy, "CKA_VALUE") == 0;
				if (value_is_der)
					cur.value.len = 0;
			} else {
				set_attr(&cur, copy, value);
			}
			free(copy);
		}
		line = next;
	}
	if (in_obj) {
		all.v = xrealloc(all.v, (all.n + 1) * sizeof *all.v);
		all.v[all.n++] = cur;
	}
	return all;
}

/* blacklist.txt: one quoted label a line; "#" starts a comment. */
static char **read_blacklist(const char *path, size_t *count)
{
	char *text = read_file(path, NULL);
	char **list = NULL;
	*count = 0;
	if (!text)
		return NULL;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		size_t n = strlen(line);
		while (n && blank(line + n - 1, 1))
			n--;
		while (n && blank(line, 1))
			line++, n--;
		if (!n)
			continue;
		list = xrealloc(list, (*count + 1) * sizeof *list);
		list[(*count)++] = xstrndup(line, n);
	}
	free(text);
	return list;
}

static bool listed(char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* ---- the selection ---- */

struct anchor {
	char *label; /* without quotes */
	const char *origin;
	struct bytes der, dn;
	br_x509_pkey pkey; /* points into key */
	unsigned char key[1024];
	bool is_ca;
};

struct anchors {
	struct anchor *v;
	size_t n;
};

static void dn_append(void *ctx, const void *buf, size_t len)
{
	bytes_put(ctx, buf, len);
}

/* Subject DN and public key, copied out of the decoder. */
static void decode(struct anchor *a)
{
	br_x509_decoder_context dc;
	br_x509_decoder_init(&dc, dn_append, &a->dn);
	br_x509_decoder_push(&dc, a->der.data, a->der.len);
	const br_x509_pkey *pk = br_x509_decoder_get_pkey(&dc);
	if (!pk)
		die("%s: \"%s\": BearSSL cannot decode it (error %d)", a->origin, a->label,
		    br_x509_decoder_last_error(&dc));
	a->is_ca = br_x509_decoder_isCA(&dc);
	a->pkey.key_type = pk->key_type;
	if (pk->key_type == BR_KEYTYPE_RSA) {
		const br_rsa_public_key *rsa = &pk->key.rsa;
		if (rsa->nlen + rsa->elen > sizeof a->key)
			die("\"%s\": RSA key too large", a->label);
		memcpy(a->key, rsa->n, rsa->nlen);
		memcpy(a->key + rsa->nlen, rsa->e, rsa->elen);
		a->pkey.key.rsa = (br_rsa_public_key){a->key, rsa->nlen, a->key + rsa->nlen, rsa->elen};
	} else if (pk->key_type == BR_KEYTYPE_EC) {
		const br_ec_public_key *ec = &pk->key.ec;
		if (ec->qlen > sizeof a->key)
			die("\"%s\": EC key too large", a->label);
		memcpy(a->key, ec->q, ec->qlen);
		a->pkey.key.ec = (br_ec_public_key){ec->curve, a->key, ec->qlen};
	} else {
		die("\"%s\": key type %d is neither RSA nor EC", a->label, pk->key_type);
	}
}

static struct anchor *add_anchor(struct anchors *set, const char *label, size_t label_len, const char *origin)
{
	set->v = xrealloc(set->v, (set->n + 1) * sizeof *set->v);
	struct anchor *a = &set->v[set->n++];
	memset(a, 0, sizeof *a);
	a->label = xstrndup(label, label_len);
	a->origin = origin;
	return a;
}

/* certdata2pem.py: a label is trusted when a CKO_NSS_TRUST object carries
 * it with CKA_TRUST_SERVER_AUTH CKT_NSS_TRUSTED_DELEGATOR and it is not
 * blacklisted; every CKO_CERTIFICATE with a trusted label is shipped (two
 * with the same label both are). Expired ones are shipped too: the script
 * only warns about them. */
static void select_certdata(struct anchors *set, const struct objects *objs, char *const *blacklist,
			    size_t blacklisted)
{
	char **trusted = NULL;
	size_t ntrusted = 0;
	for (size_t i = 0; i < objs->n; i++) {
		const struct object *o = &objs->v[i];
		if (!o->class || strcmp(o->class, "CKO_NSS_TRUST") != 0)
			continue;
		if (!o->label || !o->server_auth)
			die("certdata.txt:%u: a trust object without label or server trust", o->line);
		if (listed(blacklist, blacklisted, o->label))
			continue;
		if (strcmp(o->server_auth, "CKT_NSS_TRUSTED_DELEGATOR") == 0) {
			trusted = xrealloc(trusted, (ntrusted + 1) * sizeof *trusted);
			trusted[ntrusted++] = o->label;
		}
	}
	for (size_t i = 0; i < objs->n; i++) {
		const struct object *o = &objs->v[i];
		if (!o->class || strcmp(o->class, "CKO_CERTIFICATE") != 0 || !o->label ||
		    !listed(trusted, ntrusted, o->label))
			continue;
		size_t len = strlen(o->label);
		if (len < 2 || o->label[0] != '"' || o->label[len - 1] != '"')
			die("certdata.txt:%u: label %s is not quoted", o->line, o->label);
		if (!o->value.len)
			die("certdata.txt:%u: %s has no CKA_VALUE", o->line, o->label);
		struct anchor *a = add_anchor(set, o->label + 1, len - 2, "certdata.txt");
		bytes_put(&a->der, o->value.data, o->value.len);
	}
	free(trusted);
}

static void pem_append(void *ctx, const void *buf, size_t len)
{
	bytes_put(ctx, buf, len);
}

/* The first CERTIFICATE of a PEM file. */
static void pem_certificate(const char *path, struct bytes *der)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text)
		die("cannot read %s", path);
	br_pem_decoder_context pc;
	br_pem_decoder_init(&pc);
	const char *p = text;
	bool in_cert = false;
	while (len) {
		size_t used = br_pem_decoder_push(&pc, p, len);
		p += used, len -= used;
		switch (br_pem_decoder_event(&pc)) {
		case BR_PEM_BEGIN_OBJ:
			in_cert = strcmp(br_pem_decoder_name(&pc), "CERTIFICATE") == 0;
			br_pem_decoder_setdest(&pc, in_cert ? pem_append : NULL, der);
			break;
		case BR_PEM_END_OBJ:
			if (in_cert) {
				free(text);
				return;
			}
			break;
		case BR_PEM_ERROR:
			die("%s: bad PEM", path);
		}
	}
	die("%s: no certificate", path);
}

/* The package's Makefile copies mozilla/extra/\*.crt beside the generated
 * ones; the label is the file name without ".crt", underscores as spaces. */
static void select_extra(struct anchors *set, const char *mozilla_dir)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/extra", mozilla_dir);
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return; /* an older package without extra/ */
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		size_t len = strlen(name);
		if (len > 4 && strcmp(name + len - 4, ".crt") == 0) {
			char path[8192];
			snprintf(path, sizeof path, "%s/%s", dir, name);
			struct anchor *a = add_anchor(set, name, len - 4, "extra/");
			for (char *c = a->label; *c; c++)
				if (*c == '_')
					*c = ' ';
			pem_certificate(path, &a->der);
		}
		free(names[i]);
	}
	free(names);
}

/* ---- output ---- */

/* The label as a C comment: no "*" + "/", nothing unprintable. */
static void put_label(FILE *out, const char *label)
{
	for (const char *c = label; *c; c++) {
		if (c[0] == '*' && c[1] == '/')
			fputs("* ", out);
		else if ((unsigned char)*c < 0x20 || *c == 0x7f)
			fputc('?', out);
		else
			fputc(*c, out);
	}
}

/* aligned(1): at -O2 gcc aligns every array of 32 bytes or more to 32 (for
 * vector loads); each array here is its own section, so that cost about
 * 6 KiB of padding in a binary with the anchors. They are read byte by
 * byte, by BearSSL's X.509 code and mbedtls's parser. */
static void put_array(FILE *out, const char *name, const unsigned char *data, size_t len)
{
	fprintf(out, "static const unsigned char %s[%zu] __attribute__((aligned(1))) = {", name, len);
	for (size_t i = 0; i < len; i++)
		fprintf(out, "%s0x%02x,", i % 12 ? " " : "\n\t", data[i]);
	fputs("\n};\n", out);
}

static const char *curve_name(int curve)
{
	switch (curve) {
	case BR_EC_secp256r1: return "BR_EC_secp256r1";
	case BR_EC_secp384r1: return "BR_EC_secp384r1";
	case BR_EC_secp521r1: return "BR_EC_secp521r1";
	}
	die("unexpected curve %d", curve);
	return NULL;
}

static void key_summary(char *buf, size_t cap, const struct anchor *a)
{
	if (a->pkey.key_type == BR_KEYTYPE_RSA) {
		const br_rsa_public_key *k = &a->pkey.key.rsa;
		size_t bits = k->nlen * 8;
		for (unsigned char top = k->n[0]; top < 0x80 && bits; top <<= 1)
			bits--;
		snprintf(buf, cap, "RSA %zu", bits);
	} else {
		snprintf(buf, cap, "EC %s", curve_name(a->pkey.key.ec.curve) + 6);
	}
}

/* A line of bytes of a record, as put_array writes them. */
static void put_bytes(FILE *out, const unsigned char *data, size_t len)
{
	for (size_t i = 0; i < len; i++)
		fprintf(out, "%s0x%02x,", i % 12 ? " " : "\n\t", data[i]);
}

/* The BearSSL form as two arrays (net/tls/anchors.h has the format;
 * net/tls/anchors.c expands it): no structure per anchor and no padding
 * between arrays in the binary, about 9 KiB less than an array of
 * br_x509_trust_anchor pointing at one array per DN, modulus, exponent
 * and point. The names (flags, DN) are packed with ig_lz: DNs repeat
 * their attribute types and issuers' words, 14.9 KB packed to 5.5; keys
 * are random bytes, left as they are. */
static void put_bearssl_form(FILE *out, const struct anchors *set, size_t *bytes)
{
	struct bytes names = { 0 };
	fputs("/* ---- BearSSL form: public keys, then the packed subject DNs ---- */\n\n", out);
	fputs("const unsigned char ig_builtin_anchor_keys[] __attribute__((aligned(1))) = {", out);
	*bytes = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct anchor *a = &set->v[i];
		char key[32];
		key_summary(key, sizeof key, a);
		fprintf(out, "\n\t/* %zu: ", i);
		put_label(out, a->label);
		fprintf(out, " (%s%s) */", key, a->is_ca ? "" : ", not a CA: direct trust only");
		bool rsa = a->pkey.key_type == BR_KEYTYPE_RSA;
		unsigned char head[3] = { (unsigned char)((a->is_ca ? IG_ANCHOR_REC_CA : 0) | (rsa ? 0 : IG_ANCHOR_REC_EC)),
					  (unsigned char)(a->dn.len >> 8), (unsigned char)a->dn.len };
		if (a->dn.len > 0xffff)
			die("%s: a DN of %zu bytes does not fit a record", a->label, a->dn.len);
		bytes_put(&names, head, sizeof head);
		bytes_put(&names, a->dn.data, a->dn.len);
		if (rsa) {
			const br_rsa_public_key *k = &a->pkey.key.rsa;
			if (k->nlen > 0xffff || k->elen > 0xff)
				die("%s: an RSA key of %zu/%zu bytes does not fit a record", a->label, k->nlen, k->elen);
			unsigned char n[2] = { (unsigned char)(k->nlen >> 8), (unsigned char)k->nlen };
			unsigned char e[1] = { (unsigned char)k->elen };
			put_bytes(out, n, sizeof n);
			put_bytes(out, k->n, k->nlen);
			put_bytes(out, e, sizeof e);
			put_bytes(out, k->e, k->elen);
			*bytes += 3 + k->nlen + k->elen;
		} else {
			const br_ec_public_key *k = &a->pkey.key.ec;
			if (k->qlen > 0xff || k->curve > 0xff)
				die("%s: an EC point of %zu bytes does not fit a record", a->label, k->qlen);
			unsigned char q[2] = { (unsigned char)k->curve, (unsigned char)k->qlen };
			put_bytes(out, q, sizeof q);
			put_bytes(out, k->q, k->qlen);
			*bytes += 2 + k->qlen;
		}
	}
	fprintf(out, "\n};\nconst size_t ig_builtin_anchor_count = %zu;\n\n", set->n);

	unsigned char *packed;
	size_t len = sc_lz_pack(names.data, names.len, &packed);
	if (len == (size_t)-1)
		die("out of memory");
	/* What the binary will unpack must be what was packed. */
	unsigned char *check = xrealloc(NULL, names.len);
	if (ig_lz_unpack(check, names.len, packed, len) != names.len || memcmp(check, names.data, names.len) != 0)
		die("the packed names do not unpack to themselves");
	fprintf(out, "/* Each anchor's flags, DN length and DN: %zu bytes, packed. */\n", names.len);
	fputs("const unsigned char ig_builtin_anchor_names[] __attribute__((aligned(1))) = {", out);
	put_bytes(out, packed, len);
	fprintf(out, "\n};\nconst size_t ig_builtin_anchor_names_len = %zu;\n", len);
	fprintf(out, "const size_t ig_builtin_anchor_names_size = %zu;\n\n", names.len);
	*bytes += len;
	free(check);
	free(packed);
	free(names.data);
}

static void put_der_form(FILE *out, const struct anchors *set, size_t *bytes)
{
	fputs("/* ---- DER form: whole certificates, in the same order ---- */\n", out);
	*bytes = set->n * (sizeof(void *) + sizeof(size_t)); /* struct ig_der */
	for (size_t i = 0; i < set->n; i++) {
		const struct anchor *a = &set->v[i];
		char name[64];
		fprintf(out, "\n/* %zu: ", i);
		put_label(out, a->label);
		fputs(" */\n", out);
		snprintf(name, sizeof name, "cert%zu", i);
		put_array(out, name, a->der.data, a->der.len);
		*bytes += a->der.len;
	}
	fputs("\nconst struct ig_der ig_builtin_anchor_certs[] = {\n", out);
	for (size_t i = 0; i < set->n; i++) {
		fprintf(out, "\t{ cert%zu, sizeof cert%zu }, /* ", i, i);
		put_label(out, set->v[i].label);
		fputs(" */\n", out);
	}
	fputs("};\nconst size_t ig_builtin_anchor_cert_count =\n"
	      "\tsizeof ig_builtin_anchor_certs / sizeof ig_builtin_anchor_certs[0];\n",
	      out);
}

/* "ca-certificates (20230311+deb12u1) bookworm; ..." -> the version. */
static char *package_version(const char *mozilla_dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/../debian/changelog", mozilla_dir);
	char *text = read_file(path, NULL);
	char *open = text ? strchr(text, '(') : NULL;
	char *close = open ? strchr(open, ')') : NULL;
	char *v = close && !memchr(open, '\n', (size_t)(close - open)) ? xstrndup(open + 1, (size_t)(close - open - 1))
								      : xstrndup("(unknown version)", 17);
	free(text);
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: anchors MOZILLA_DIR OUT.c\n");
		return 2;
	}
	const char *dir = argv[1], *out_path = argv[2];
	char path[4096];
	snprintf(path, sizeof path, "%s/certdata.txt", dir);
	char *certdata = read_file(path, NULL);
	if (!certdata)
		die("cannot read %s", path);
	snprintf(path, sizeof path, "%s/blacklist.txt", dir);
	size_t blacklisted;
	char **blacklist = read_blacklist(path, &blacklisted);

	struct objects objs = parse_certdata(certdata);
	struct anchors set = {0};
	select_certdata(&set, &objs, blacklist, blacklisted);
	size_t from_certdata = set.n;
	select_extra(&set, dir);
	if (!set.n)
		die("no trusted certificate in %s", dir);
	for (size_t i = 0; i < set.n; i++)
		decode(&set.v[i]);

	/* Written aside and renamed, so that make never sees half a file. */
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
	FILE *out = fopen(tmp, "w");
	if (!out)
		die("cannot write %s", tmp);
	char *version = package_version(dir);
	fprintf(out,
		"/* Generated by tools/anchors from Debian's ca-certificates %s\n"
		" * (mozilla/certdata.txt, blacklist.txt, extra/): do not edit.\n"
		" * %zu trust anchors: %zu trusted by Mozilla for server authentication,\n"
		" * %zu added by Debian. The contract is net/tls/anchors.h. */\n"
		"#include \"net/tls/anchors.h\"\n\n",
		version, set.n, from_certdata, set.n - from_certdata);
	size_t bearssl_bytes, der_bytes;
	put_bearssl_form(out, &set, &bearssl_bytes);
	put_der_form(out, &set, &der_bytes);
	if (fclose(out) != 0 || rename(tmp, out_path) != 0)
		die("cannot write %s", out_path);
	printf("anchors: %zu from ca-certificates %s (%zu from certdata.txt, %zu from extra/); "
	       "data: BearSSL form %zu bytes, DER form %zu bytes\n",
	       set.n, version, from_certdata, set.n - from_certdata, bearssl_bytes, der_bytes);
	return 0;
}
