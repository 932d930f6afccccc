/* The chunked transfer coding's decoder (RFC 9112 7.1), shared by the
 * server's request bodies (conn.c) and the client's response bodies: an
 * octet state machine that decodes in place, checks chunk extensions
 * against their grammar and trailer fields against the field syntax, and
 * keeps its state between calls, so input may be split at any byte. */
#include "codec.h"
#include "ingot/base.h"

#include <string.h>

enum chunk_state {
	CS_SIZE = 0,      /* hex digits; line_bytes counts them */
	CS_SIZE_WS,       /* BWS after the size: only ';' may follow */
	CS_EXT_NAME_PRE,  /* after ';': BWS, then a token */
	CS_EXT_NAME,      /* chunk-ext-name */
	CS_EXT_NAME_WS,   /* BWS after a name: '=' or ';' must follow */
	CS_EXT_VALUE_PRE, /* after '=': BWS, then a token or a quoted-string */
	CS_EXT_TOKEN,     /* a token value */
	CS_EXT_QUOTED,    /* inside a quoted-string value */
	CS_EXT_QUOTED_PAIR, /* after a backslash in it */
	CS_EXT_QUOTED_END,  /* after its closing quote */
	CS_EXT_VALUE_WS,  /* BWS after a value: only ';' may follow */
	CS_SIZE_LF,       /* CR that ends the size line seen */
	CS_DATA,          /* bytes_left_in_chunk data octets to copy */
	CS_DATA_CR,       /* the CRLF that must follow the data */
	CS_DATA_LF,
	CS_TRAILER_START, /* start of a trailer field, or of the final CRLF */
	CS_TRAILER_NAME,
	CS_TRAILER_VALUE,
	CS_TRAILER_LF,
	CS_END_LF, /* CR of the final empty line seen */
	CS_DONE,
	CS_ERROR,
};

static bool chunk_fail(struct http_chunked_decoder *d, const char *detail)
{
	d->state = CS_ERROR;
	d->error = (struct http_error){ HTTP_ERR_FRAMING, detail };
	return false;
}

/* An extension octet. Extensions are checked, then skipped: none is
 * understood here, but one outside the grammar means the peer frames
 * differently from us, so the message is refused rather than guessed at. */
static bool ext_byte(struct http_chunked_decoder *d, char c)
{
	static const char bad[] = "invalid character in chunk extension";
	static const char open_quote[] = "unterminated quoted string in chunk extension";
	bool tchar = http_has_class(c, HTTP_C_TCHAR), ows = http_is_ows(c);
	switch (d->state) {
	case CS_EXT_NAME_PRE:
		if (tchar)
			d->state = CS_EXT_NAME;
		else if (!ows)
			return chunk_fail(d, c == '\r' || c == ';' || c == '=' ? "empty chunk extension name" : bad);
		return true;
	case CS_EXT_NAME:
	case CS_EXT_NAME_WS:
		if (c == '=')
			d->state = CS_EXT_VALUE_PRE;
		else if (c == ';')
			d->state = CS_EXT_NAME_PRE;
		else if (ows)
			d->state = CS_EXT_NAME_WS;
		else if (d->state == CS_EXT_NAME && c == '\r')
			d->state = CS_SIZE_LF;
		else if (d->state != CS_EXT_NAME || !tchar)
			return chunk_fail(d, bad);
		return true;
	case CS_EXT_VALUE_PRE:
		if (c == '"')
			d->state = CS_EXT_QUOTED;
		else if (tchar)
			d->state = CS_EXT_TOKEN;
		else if (!ows)
			return chunk_fail(d, "empty chunk extension value");
		return true;
	case CS_EXT_TOKEN:
	case CS_EXT_QUOTED_END:
		if (c == ';')
			d->state = CS_EXT_NAME_PRE;
		else if (ows)
			d->state = CS_EXT_VALUE_WS;
		else if (c == '\r')
			d->state = CS_SIZE_LF;
		else if (d->state != CS_EXT_TOKEN || !tchar)
			return chunk_fail(d, bad);
		return true;
	case CS_EXT_VALUE_WS:
		if (c == ';')
			d->state = CS_EXT_NAME_PRE;
		else if (!ows)
			return chunk_fail(d, bad);
		return true;
	case CS_EXT_QUOTED:
		if (c == '"')
			d->state = CS_EXT_QUOTED_END;
		else if (c == '\\')
			d->state = CS_EXT_QUOTED_PAIR;
		else if (!http_has_class(c, HTTP_C_QDTEXT))
			return chunk_fail(d, c == '\r' || c == '\n' ? open_quote : bad);
		return true;
	default: /* CS_EXT_QUOTED_PAIR: quoted-pair = "\\" ( HTAB / SP / VCHAR / obs-text ) */
		if (!http_has_class(c, HTTP_C_VALUE))
			return chunk_fail(d, c == '\r' || c == '\n' ? open_quote : bad);
		d->state = CS_EXT_QUOTED;
		return true;
	}
}

/* After the digits: chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "="
 * BWS chunk-ext-val ] ). Whitespace is allowed only before a ';' (or an
 * '='), so "5 5" or "5 " is refused. The line's length is bounded, so a
 * peer cannot stream an endless run of zeros or extensions that no body
 * limit would ever count. */
static bool size_line_byte(struct http_chunked_decoder *d, unsigned char c)
{
	if (++d->line_bytes > HTTP_CHUNK_LINE_MAX)
		return chunk_fail(d, "chunk size line too long");
	if (d->state >= CS_EXT_NAME_PRE && d->state <= CS_EXT_VALUE_WS)
		return ext_byte(d, (char)c);
	if (c == '\r' && d->state == CS_SIZE)
		d->state = CS_SIZE_LF;
	else if (c == '\n')
		return chunk_fail(d, "bare LF after chunk size");
	else if (c == ';')
		d->state = CS_EXT_NAME_PRE;
	else if (http_is_ows((char)c))
		d->state = CS_SIZE_WS;
	else
		return chunk_fail(d, "invalid character after chunk size");
	return true;
}

static bool size_byte(struct http_chunked_decoder *d, unsigned char c)
{
	int v = ig_hex_digit((char)c);
	if (v < 0) {
		if (d->line_bytes == 0)
			return chunk_fail(d, "missing chunk size");
		return size_line_byte(d, c);
	}
	if (d->line_bytes == 16) /* 16 hex digits fill a uint64_t */
		return chunk_fail(d, "chunk size too large");
	d->line_bytes++;
	d->bytes_left_in_chunk = d->bytes_left_in_chunk << 4 | (uint64_t)v;
	return true;
}

static bool trailer_byte(struct http_chunked_decoder *d, unsigned char c)
{
	if (++d->trailer_bytes > d->max_trailer_bytes)
		return chunk_fail(d, "trailer section too large");
	switch (d->state) {
	case CS_TRAILER_START:
		if (http_has_class((char)c, HTTP_C_TCHAR)) {
			d->state = CS_TRAILER_NAME;
			return true;
		}
		return chunk_fail(d, http_is_ows((char)c) ? "obsolete line folding in trailer"
						      : "invalid trailer field name");
	case CS_TRAILER_NAME:
		if (c == ':')
			d->state = CS_TRAILER_VALUE;
		else if (!http_has_class((char)c, HTTP_C_TCHAR))
			return chunk_fail(d, "invalid trailer field name");
		return true;
	case CS_TRAILER_VALUE:
		if (c == '\r')
			d->state = CS_TRAILER_LF;
		else if (!http_has_class((char)c, HTTP_C_VALUE))
			return chunk_fail(d, "invalid trailer field value");
		return true;
	default: /* CS_TRAILER_LF */
		if (c != '\n')
			return chunk_fail(d, "bare CR in trailer");
		d->state = CS_TRAILER_START;
		return true;
	}
}

/* Advances the decoder by one framing octet (anything but chunk data). */
static bool chunk_step(struct http_chunked_decoder *d, unsigned char c)
{
	switch (d->state) {
	case CS_SIZE:
		return size_byte(d, c);
	case CS_SIZE_WS:
	case CS_EXT_NAME_PRE:
	case CS_EXT_NAME:
	case CS_EXT_NAME_WS:
	case CS_EXT_VALUE_PRE:
	case CS_EXT_TOKEN:
	case CS_EXT_QUOTED:
	case CS_EXT_QUOTED_PAIR:
	case CS_EXT_QUOTED_END:
	case CS_EXT_VALUE_WS:
		return size_line_byte(d, c);
	case CS_SIZE_LF:
		if (c != '\n')
			return chunk_fail(d, "bare CR after chunk size");
		d->line_bytes = 0;
		d->state = d->bytes_left_in_chunk == 0 ? CS_TRAILER_START : CS_DATA;
		return true;
	case CS_DATA_CR:
		if (c != '\r')
			return chunk_fail(d, "missing CRLF after chunk data");
		d->state = CS_DATA_LF;
		return true;
	case CS_DATA_LF:
		if (c != '\n')
			return chunk_fail(d, "missing CRLF after chunk data");
		d->state = CS_SIZE;
		return true;
	case CS_TRAILER_START:
		if (c == '\r') { /* the empty line: no trailer byte */
			d->state = CS_END_LF;
			return true;
		}
		if (c == '\n')
			return chunk_fail(d, "bare LF in trailer section");
		return trailer_byte(d, c);
	case CS_TRAILER_NAME:
	case CS_TRAILER_VALUE:
	case CS_TRAILER_LF:
		return trailer_byte(d, c);
	case CS_END_LF:
		if (c != '\n')
			return chunk_fail(d, "bare CR after trailer section");
		d->state = CS_DONE;
		return true;
	default:
		return chunk_fail(d, "decoder in an invalid state");
	}
}

ssize_t ig_http_decode_chunked(struct http_chunked_decoder *d, char *buf, size_t *len)
{
	char *dst = buf;
	const char *src = buf, *end = buf + *len;
	if (d->state == CS_ERROR) {
		*len = 0;
		return HTTP_ERROR;
	}
	while (src < end && d->state != CS_DONE) {
		if (d->state == CS_DATA) {
			size_t n = (size_t)(end - src);
			if (d->bytes_left_in_chunk < n)
				n = (size_t)d->bytes_left_in_chunk;
			memmove(dst, src, n);
			dst += n;
			src += n;
			d->bytes_left_in_chunk -= n;
			d->total += n;
			if (d->bytes_left_in_chunk == 0)
				d->state = CS_DATA_CR;
		} else if (!chunk_step(d, (unsigned char)*src++)) {
			*len = (size_t)(dst - buf);
			return HTTP_ERROR;
		}
	}
	*len = (size_t)(dst - buf);
	if (d->state != CS_DONE)
		return HTTP_INCOMPLETE;
	size_t rest = (size_t)(end - src);
	memmove(dst, src, rest);
	return (ssize_t)rest;
}
