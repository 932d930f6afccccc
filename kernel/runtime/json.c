/* JSON writer primitives for generated encoders: escaped strings, integers
 * without printf, shortest round-trip doubles. They append to an ig_wbuf. */
#include "ingot/base.h"
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* 0: copy; 'u': \u00XX; else the character after the backslash. */
static const char escape_class[128] = {
	['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r',
	['"'] = '"', ['\\'] = '\\',
	[0] = 'u', [1] = 'u', [2] = 'u', [3] = 'u', [4] = 'u', [5] = 'u', [6] = 'u', [7] = 'u',
	[11] = 'u', [14] = 'u', [15] = 'u', [16] = 'u', [17] = 'u', [18] = 'u', [19] = 'u',
	[20] = 'u', [21] = 'u', [22] = 'u', [23] = 'u', [24] = 'u', [25] = 'u', [26] = 'u',
	[27] = 'u', [28] = 'u', [29] = 'u', [30] = 'u', [31] = 'u',
};

size_t ig_json_escape(char *dst, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char *d = dst;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e = c < 128 ? escape_class[c] : 0;
		if (ig_likely(!e)) {
			*d++ = (char)c;
		} else if (e == 'u') {
			memcpy(d, "\\u00", 4);
			d[4] = hex[c >> 4];
			d[5] = hex[c & 15];
			d += 6;
		} else {
			d[0] = '\\';
			d[1] = e;
			d += 2;
		}
	}
	return (size_t)(d - dst);
}

IG_HOT void ig_json_string(ig_wbuf *w, const char *s, size_t n)
{
	char *d = ig_wbuf_reserve(w, 6 * n + 2);
	if (!d)
		return;
	d[0] = '"';
	size_t k = ig_json_escape(d + 1, s, n);
	d[k + 1] = '"';
	w->len += k + 2;
}

/* "00".."99": two digits a division, the common case (ids, counts,
 * lengths of 1..5 digits) in one to three steps. Not IG_HOT: the log
 * writes numbers from the start on (ig_fmt_i64), so it lives in the
 * start's .text, resident anyway, not in the request block (net/cold.ld). */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

size_t ig_fmt_u64(char *out, uint64_t v)
{
	size_t n = 1;
	for (uint64_t t = v; t >= 10; t /= 10)
		n++;
	char *d = out + n;
	while (v >= 100) {
		unsigned k = (unsigned)(v % 100) * 2;
		v /= 100;
		d -= 2;
		d[0] = digit_pairs[k];
		d[1] = digit_pairs[k + 1];
	}
	if (v >= 10) {
		d -= 2;
		d[0] = digit_pairs[v * 2];
		d[1] = digit_pairs[v * 2 + 1];
	} else {
		d[-1] = (char)('0' + v);
	}
	return n;
}

size_t ig_fmt_i64(char *out, int64_t v)
{
	if (v >= 0)
		return ig_fmt_u64(out, (uint64_t)v);
	out[0] = '-';
	return 1 + ig_fmt_u64(out + 1, (uint64_t)0 - (uint64_t)v);
}

IG_HOT void ig_json_int(ig_wbuf *w, int64_t v)
{
	char *d = ig_wbuf_reserve(w, 21);
	if (d)
		w->len += ig_fmt_i64(d, v);
}

void ig_json_uint(ig_wbuf *w, uint64_t v)
{
	char *d = ig_wbuf_reserve(w, 20);
	if (d)
		w->len += ig_fmt_u64(d, v);
}

void ig_json_bool(ig_wbuf *w, bool v)
{
	if (v)
		ig_wbuf_lit(w, "true");
	else
		ig_wbuf_lit(w, "false");
}

/* Fast path for decimals with few fraction digits (prices, ratios): the
 * smallest k such that v * 10^k is an integer N below 2^53 and N / 10^k
 * gives v back. Both N and 10^k are exact doubles, so that division is
 * correctly rounded, as strtod would read "N e-k": the digits round-trip,
 * and the smallest k gives the fewest. */
static bool json_double_fixed(ig_wbuf *w, double v)
{
	static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9 };
	double a = fabs(v);
	for (int k = 1; k < (int)IG_COUNTOF(pow10); k++) {
		double scaled = a * pow10[k];
		if (scaled >= 9007199254740992.0)
			return false;
		uint64_t n = (uint64_t)scaled;
		if ((double)n != scaled || (double)n / pow10[k] != a)
			continue;
		/* 19.99 * 100 is not exact but 19.99 * 1000 is: drop the zeros. */
		while (k > 1 && n % 10 == 0) {
			n /= 10;
			k--;
		}
		char digits[24];
		size_t len = ig_fmt_u64(digits, n);
		/* A sign, then "0." and k digits, or the len digits and a point. */
		char *d = ig_wbuf_reserve(w, 1 + (len <= (size_t)k ? (size_t)k + 2 : len + 1));
		if (!d)
			return true;
		size_t o = 0;
		if (signbit(v))
			d[o++] = '-';
		if (len <= (size_t)k) { /* 0.05: pad with zeros */
			d[o++] = '0';
			d[o++] = '.';
			for (size_t z = len; z < (size_t)k; z++)
				d[o++] = '0';
			memcpy(d + o, digits, len);
			o += len;
		} else {
			memcpy(d + o, digits, len - (size_t)k);
			o += len - (size_t)k;
			d[o++] = '.';
			memcpy(d + o, digits + len - (size_t)k, (size_t)k);
			o += (size_t)k;
		}
		w->len += o;
		return true;
	}
	return false;
}

/* Shortest round-trip: the fewest significant digits that parse back to the
 * same double. Integral values within 2^53 print as integers. */
void ig_json_double(ig_wbuf *w, double v)
{
	if (!isfinite(v)) {
		ig_wbuf_lit(w, "null");
		return;
	}
	if (v == (double)(int64_t)v && fabs(v) < 9007199254740992.0) {
		if (v == 0 && signbit(v))
			ig_wbuf_lit(w, "-0");
		else
			ig_json_int(w, (int64_t)v);
		return;
	}
	if (fabs(v) >= 1e-5 && json_double_fixed(w, v))
		return;
	char buf[32];
	int n = 0;
	for (int prec = 1; prec <= 17; prec++) {
		n = snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	ig_wbuf_put(w, buf, (size_t)n);
}
