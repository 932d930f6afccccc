/* String formats (format.h): hand-written recognizers over (pointer,
 * length), no allocation, no locale, ASCII only (a non-ASCII byte never
 * matches a digit or a letter). Where RFCs allow more than a request
 * should carry (comments and folding in mail, IPvFuture hosts in mail),
 * the narrower form is accepted; the JSON-Schema-Test-Suite decides. */
#include "format.h"

static bool is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

static bool is_alpha(char c)
{
	return (unsigned char)((c | 0x20) - 'a') < 26;
}

static bool is_hex(char c)
{
	return is_digit(c) || (unsigned char)((c | 0x20) - 'a') < 6;
}

/* n ASCII digits at s as a number, or -1. */
static int digits(const char *s, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* ---- RFC 3339 ---- */

static int days_in_month(int year, int month)
{
	static const unsigned char days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
	return month == 2 && leap ? 29 : days[month - 1];
}

/* full-date = date-fullyear "-" date-month "-" date-mday, exactly 10 bytes. */
static bool full_date(const char *s)
{
	int y = digits(s, 4), m = digits(s + 5, 2), d = digits(s + 8, 2);
	return y >= 0 && s[4] == '-' && s[7] == '-' && m >= 1 && m <= 12 && d >= 1 &&
	       d <= days_in_month(y, m);
}

bool ig_format_date(const char *s, size_t n)
{
	return n == 10 && full_date(s);
}

/* date-time = full-date "T" partial-time time-offset, where
 * partial-time = HH ":" MM ":" SS [ "." 1*DIGIT ] and
 * time-offset = "Z" / ("+" / "-") HH ":" MM, T and Z in either case.
 * A leap second (:60) is valid only at 23:59 UTC, the only minute one can
 * be inserted in; the offset is undone to find that minute. */
bool ig_format_date_time(const char *s, size_t n)
{
	if (n < 20 || !full_date(s) || (s[10] | 0x20) != 't')
		return false;
	const char *t = s + 11, *end = s + n;
	int hh = digits(t, 2), mm = digits(t + 3, 2), ss = digits(t + 6, 2);
	if (hh < 0 || mm < 0 || ss < 0 || t[2] != ':' || t[5] != ':' || hh > 23 || mm > 59 ||
	    ss > 60)
		return false;
	const char *p = t + 8;
	if (p < end && *p == '.') {
		const char *f = ++p;
		while (p < end && is_digit(*p))
			p++;
		if (p == f)
			return false;
	}
	int offset = 0; /* minutes east of UTC */
	if (p < end && (*p | 0x20) == 'z') {
		p++;
	} else {
		if (end - p != 6 || (*p != '+' && *p != '-'))
			return false;
		int oh = digits(p + 1, 2), om = digits(p + 4, 2);
		if (oh < 0 || om < 0 || p[3] != ':' || oh > 23 || om > 59)
			return false;
		offset = (oh * 60 + om) * (*p == '-' ? -1 : 1);
		p += 6;
	}
	if (p != end)
		return false;
	if (ss == 60) {
		int utc = ((hh * 60 + mm - offset) % 1440 + 1440) % 1440;
		return utc == 23 * 60 + 59;
	}
	return true;
}

/* ---- UUID ---- */

/* 8-4-4-4-12 hex digits, any case; versions and variants are not
 * checked (the suite counts unknown ones valid). */
bool ig_format_uuid(const char *s, size_t n)
{
	if (n != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-' : !is_hex(s[i]))
			return false;
	}
	return true;
}

/* ---- IP addresses (shared by mail domains and URI hosts) ---- */

/* dotted-quad per RFC 3986 dec-octet: 0-255, no leading zeros. */
static bool ipv4(const char *s, size_t n)
{
	size_t i = 0;
	for (int part = 0; part < 4; part++) {
		if (part > 0) {
			if (i == n || s[i] != '.')
				return false;
			i++;
		}
		size_t start = i;
		int v = 0;
		while (i < n && is_digit(s[i]) && i - start < 3)
			v = v * 10 + (s[i++] - '0');
		size_t len = i - start;
		if (len == 0 || v > 255 || (len > 1 && s[start] == '0'))
			return false;
	}
	return i == n;
}

static bool contains(const char *s, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == c)
			return true;
	return false;
}

/* RFC 4291 section 2.2 text forms: eight 1-4 digit hex groups, one "::"
 * standing for at least one zero group, a trailing dotted-quad counting as
 * two groups. */
static bool ipv6(const char *s, size_t n)
{
	size_t i = 0;
	int groups = 0;
	bool compressed = false;
	if (n >= 2 && s[0] == ':' && s[1] == ':') {
		compressed = true;
		i = 2;
	} else if (n == 0 || s[0] == ':') {
		return false;
	}
	while (i < n) {
		/* The last piece, if it has dots, is the dotted-quad. */
		if (groups <= 6 && contains(s + i, n - i, '.') && !contains(s + i, n - i, ':')) {
			if (!ipv4(s + i, n - i))
				return false;
			groups += 2;
			break;
		}
		size_t start = i;
		while (i < n && is_hex(s[i]) && i - start < 4)
			i++;
		if (i == start)
			return false;
		groups++;
		if (i == n)
			break;
		if (s[i] != ':')
			return false;
		i++;
		if (i < n && s[i] == ':') {
			if (compressed)
				return false;
			compressed = true;
			i++;
		} else if (i == n) {
			return false; /* a single trailing colon */
		}
	}
	return compressed ? groups <= 7 : groups == 8;
}

/* ---- mail (RFC 5321 Mailbox, RFC 5322 addr-spec without comments) ---- */

/* atext of RFC 5322: letters, digits and !#$%&'*+-/=?^_`{|}~ */
static bool is_atext(char c)
{
	if (is_alpha(c) || is_digit(c))
		return true;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
	case '-': case '/': case '=': case '?': case '^': case '_': case '`': case '{':
	case '|': case '}': case '~':
		return true;
	default:
		return false;
	}
}

/* dot-atom: atoms of atext joined by single dots; returns its length. */
static size_t dot_atom(const char *s, size_t n)
{
	size_t i = 0;
	for (;;) {
		size_t start = i;
		while (i < n && is_atext(s[i]))
			i++;
		if (i == start)
			return 0;
		if (i + 1 < n && s[i] == '.' && is_atext(s[i + 1]))
			i++;
		else
			return i;
	}
}

/* Quoted-string of RFC 5321: '"' *(qtextSMTP / "\" %d32-126) '"', where
 * qtextSMTP is printable ASCII and space but '"' and '\'. Returns its
 * length, 0 if there is none. */
static size_t quoted_string(const char *s, size_t n)
{
	if (n == 0 || s[0] != '"')
		return 0;
	for (size_t i = 1; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"')
			return i + 1;
		if (c == '\\') {
			if (++i == n || (unsigned char)s[i] < 32 || (unsigned char)s[i] > 126)
				return 0;
		} else if (c < 32 || c > 126) {
			return 0;
		}
	}
	return 0;
}

/* A host name: labels of letters, digits and inner hyphens, 1-63 bytes
 * each, 253 in all (RFC 1123). */
static bool hostname(const char *s, size_t n)
{
	if (n == 0 || n > 253)
		return false;
	size_t label = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (label == 0 || label > 63 || s[i - 1] == '-')
				return false;
			label = 0;
		} else if (is_alpha(s[i]) || is_digit(s[i]) || (s[i] == '-' && label > 0)) {
			label++;
		} else {
			return false;
		}
	}
	return true;
}

/* A mail domain: a host name or an address literal [IPv4] / [IPv6:...]. */
static bool mail_domain(const char *s, size_t n)
{
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
		/* "IPv6:" is case-insensitive like every ABNF literal. */
		if (n > 5 && (s[0] | 0x20) == 'i' && (s[1] | 0x20) == 'p' && (s[2] | 0x20) == 'v' &&
		    s[3] == '6' && s[4] == ':')
			return ipv6(s + 5, n - 5);
		return ipv4(s, n);
	}
	return hostname(s, n);
}

bool ig_format_email(const char *s, size_t n)
{
	size_t local = n && s[0] == '"' ? quoted_string(s, n) : dot_atom(s, n);
	/* RFC 5321 4.5.3.1: 64 octets of local part, 254 of path. */
	if (local == 0 || local > 64 || n > 254 || local >= n || s[local] != '@')
		return false;
	return mail_domain(s + local + 1, n - local - 1);
}

/* ---- URI (RFC 3986 section 3, absolute with scheme) ---- */

enum {
	U_UNRESERVED = 1, /* ALPHA DIGIT - . _ ~ */
	U_SUBDELIM = 2,   /* ! $ & ' ( ) * + , ; = */
};

static int uri_class(char c)
{
	if (is_alpha(c) || is_digit(c))
		return U_UNRESERVED;
	switch (c) {
	case '-': case '.': case '_': case '~':
		return U_UNRESERVED;
	case '!': case '$': case '&': case '\'': case '(': case ')': case '*': case '+':
	case ',': case ';': case '=':
		return U_SUBDELIM;
	default:
		return 0;
	}
}

static bool in_set(const char *set, char c)
{
	for (; *set; set++)
		if (*set == c)
			return true;
	return false;
}

/* Every byte of [s, s+n) is unreserved, a sub-delim, one of `extra` or
 * part of a %XX escape. */
static bool uri_chars(const char *s, size_t n, const char *extra)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			if (n - i < 3 || !is_hex(s[i + 1]) || !is_hex(s[i + 2]))
				return false;
			i += 2;
		} else if (!uri_class(c) && !in_set(extra, c)) {
			return false;
		}
	}
	return true;
}

static const char *find(const char *s, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == c)
			return s + i;
	return NULL;
}

/* IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) */
static bool ipvfuture(const char *s, size_t n)
{
	size_t i = 1;
	while (i < n && is_hex(s[i]))
		i++;
	if (i == 1 || i + 1 >= n || s[i] != '.')
		return false;
	for (i++; i < n; i++)
		if (!uri_class(s[i]) && s[i] != ':')
			return false;
	return true;
}

/* authority = [ userinfo "@" ] host [ ":" port ]; host is an IP-literal
 * in brackets or a reg-name (which also covers IPv4address: digits and
 * dots, so "999.999.999.999" is a valid, if unresolvable, name). */
static bool authority(const char *s, size_t n)
{
	const char *at = find(s, n, '@'), *end = s + n;
	if (at) {
		if (!uri_chars(s, (size_t)(at - s), ":"))
			return false;
		s = at + 1;
	}
	const char *port;
	if (s < end && *s == '[') {
		const char *close = find(s, (size_t)(end - s), ']');
		if (!close)
			return false;
		const char *ip = s + 1;
		size_t len = (size_t)(close - ip);
		if (!(len && (*ip | 0x20) == 'v' ? ipvfuture(ip, len) : ipv6(ip, len)))
			return false;
		port = close + 1;
		if (port < end && *port != ':')
			return false;
	} else {
		port = find(s, (size_t)(end - s), ':');
		if (!port)
			port = end;
		if (!uri_chars(s, (size_t)(port - s), ""))
			return false;
	}
	if (port < end)
		for (const char *d = port + 1; d < end; d++)
			if (!is_digit(*d))
				return false;
	return true;
}

/* URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ], with
 * hier-part = "//" authority path-abempty / path-absolute / path-rootless
 * / path-empty. A relative reference has no scheme and is not a URI. */
bool ig_format_uri(const char *s, size_t n)
{
	if (n == 0 || !is_alpha(s[0]))
		return false;
	size_t i = 1;
	while (i < n && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '+' || s[i] == '-' ||
			 s[i] == '.'))
		i++;
	if (i == n || s[i] != ':')
		return false;
	const char *p = s + i + 1, *end = s + n;
	const char *hash = find(p, (size_t)(end - p), '#');
	if (hash && !uri_chars(hash + 1, (size_t)(end - hash - 1), ":@/?"))
		return false;
	const char *hier_end = hash ? hash : end;
	const char *query = find(p, (size_t)(hier_end - p), '?');
	if (query && !uri_chars(query + 1, (size_t)(hier_end - query - 1), ":@/?"))
		return false;
	if (query)
		hier_end = query;
	if (hier_end - p >= 2 && p[0] == '/' && p[1] == '/') {
		p += 2;
		const char *slash = find(p, (size_t)(hier_end - p), '/');
		const char *auth_end = slash ? slash : hier_end;
		if (!authority(p, (size_t)(auth_end - p)))
			return false;
		p = auth_end;
	}
	/* The path: segments of pchar; its first byte is '/' or none after an
	 * authority, and "//" cannot start it otherwise (handled above). */
	return uri_chars(p, (size_t)(hier_end - p), ":@/");
}
